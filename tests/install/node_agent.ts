// An agent loop on the ctxdb package as `npm install <tarball>` gave it,
// type-checked with tsc --noEmit against the package's own typings: the
// user's prompt, a compiled request, the provider's answer with a tool
// call recorded, the tool's result, the next request, the checks.
import * as ctxdb from 'ctxdb';

const db: ctxdb.Database = ctxdb.open(process.argv[2]);
const session = db.createSession({ agent_id: 'outside' });
db.append(session.id, { type: 'UserPromptSubmitted', actor: 'user', payload: { text: 'what is in README.md?' } });
const first = db.compile({ session_id: session.id, max_tokens: 8000, format: 'openai.chat' });
const firstMessages = first.messages as ctxdb.JsonObject[];
if (firstMessages[firstMessages.length - 1].role !== 'user') throw new Error('the request does not end on the prompt');
db.recordResponse(session.id, {
  id: 'chatcmpl-1', object: 'chat.completion', created: 1700000000, model: 'gpt-4o',
  choices: [{ index: 0, finish_reason: 'tool_calls', message: {
    role: 'assistant', content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
  } }],
  usage: { prompt_tokens: 20, completion_tokens: 9, total_tokens: 29 },
}, { format: 'openai.chat' });
db.append(session.id, { type: 'ToolCallFinished', actor: 'tool', payload: { tool_call_id: 'call_1', output: '# ctxdb' } });
const second = db.compile({ session_id: session.id, max_tokens: 8000, format: 'openai.chat' });
const roles = (second.messages as ctxdb.JsonObject[]).map((m) => m.role);
if (roles.slice(-2).join() !== 'assistant,tool') throw new Error(`roles: ${roles.join()}`);
const report: ctxdb.VerifyResult = db.verify(null, { anchor: db.anchor() });
if (!report.ok || !report.anchor?.ok) throw new Error(JSON.stringify(report));
// Errors as better-sqlite3's users expect them: code is the status's name.
let code: ctxdb.Code | undefined;
try {
  db.event('evt_none');
} catch (e) {
  if (!(e instanceof ctxdb.CtxdbError)) throw e;
  code = e.code;
  if (e.errno !== ctxdb.statuses.NOT_FOUND) throw new Error(`errno ${e.errno}`);
}
if (code !== 'CTXDB_NOT_FOUND') throw new Error(`code ${code}`);
db.close();
console.log(`ctxdb ${ctxdb.version()} from ${require.resolve('ctxdb')}`);
