// peers.mjs — tiktoken (WASM) and gpt-tokenizer (pure JS) on one text file,
// for bench_tokenizer, which runs it in the same run as its own passes.
//
//   node peers.mjs FILE ENCODING ROUNDS    one JSON line on stdout
//
// tiktoken has no count but the length of its ids, so its one figure is
// both; gpt-tokenizer counts (countTokens) and encodes. Special-token
// spellings are text, as in ctxdb's passes. The figure
// is the median of ROUNDS passes after one warm-up pass.
import { readFileSync } from 'node:fs';
import { get_encoding } from 'tiktoken';

const [file, encoding = 'o200k_base', roundsArg = '3'] = process.argv.slice(2);
const rounds = Number(roundsArg);
const text = readFileSync(file, 'utf8');
const mb = Buffer.byteLength(text, 'utf8') / 1e6;

// MB/s over the process's CPU time (user + system, GC threads included)
// and over wall time, medians.
function rate(fn) {
  let n = fn(); // warm-up (and the count reported)
  const cpu = [], wall = [];
  for (let i = 0; i < rounds; ++i) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    n = fn();
    const c = process.cpuUsage(c0);
    cpu.push(mb / ((c.user + c.system) / 1e6));
    wall.push(mb / (Number(process.hrtime.bigint() - t0) / 1e9));
  }
  const median = (v) => v.sort((a, b) => a - b)[Math.floor(v.length / 2)];
  return { cpu_mb_s: median(cpu), wall_mb_s: median(wall), tokens: n };
}

const tk = get_encoding(encoding);
const gpt = await import(`gpt-tokenizer/encoding/${encoding}`);
const asText = { disallowedSpecial: new Set(), allowedSpecial: new Set() };

const out = {
  tiktoken_encode: rate(() => tk.encode_ordinary(text).length),
  gpt_tokenizer_count: rate(() => gpt.countTokens(text, asText)),
  gpt_tokenizer_encode: rate(() => gpt.encode(text, asText).length),
};
tk.free();
console.log(JSON.stringify(out));
