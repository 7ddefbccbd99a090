// Type declarations of the ctxdb Node binding as an ES module:
// `import ctxdb from 'ctxdb'` and named imports.
import * as ctxdb from './index.js';

export * from './index.js';
export default ctxdb;
