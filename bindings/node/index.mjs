// ESM entry point: `import ctxdb from 'ctxdb'` or named imports
// (`import { open, CtxdbError, codes } from 'ctxdb'`). A thin wrapper over
// the CommonJS module, so both share one loaded addon.
import ctxdb from './index.js';

export default ctxdb;
export const {
  open,
  Database,
  EventIterator,
  ArtifactWriter,
  CtxdbError,
  codes,
  statuses,
  codeName,
  ABI_VERSION,
  version,
  versionNumber,
  abiVersion,
  countTokens,
  encodeTokens,
} = ctxdb;
