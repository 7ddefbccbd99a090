// exact.mjs — exact o200k token counts of the corpus, per file and per
// chunk, from gpt-tokenizer (a pure-JS BPE with the o200k ranks shipped
// inside the npm package; nothing is fetched at run time).
//
//   node exact.mjs FILE...   JSON on stdout
//
// Each file is cut into message-sized chunks at line boundaries: a chunk
// closes at the first line end at or past kTarget bytes, or before a line
// that would take it past kMax; a line longer than kMax alone is cut at a
// UTF-8 character boundary. The C++ test and
// bench_tokens measure the estimator on these byte ranges, so the rule
// lives here only: the ranges are written into the fixture.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { createRequire } from 'node:module';
import { encode } from 'gpt-tokenizer/encoding/o200k_base';

const kTarget = 2048;
const kMax = 4096;
const kMinTail = 512; // a shorter last chunk joins the one before

// Special-token spellings in a text are ordinary text here, as they are in
// a message an agent stores.
const count = (bytes) =>
  encode(bytes.toString('utf8'), { disallowedSpecial: new Set(), allowedSpecial: new Set() })
    .length;

// Byte offsets [start, end) of the chunks of buf.
function chunks(buf) {
  const out = [];
  let start = 0;
  let pos = 0;
  while (pos < buf.length) {
    const nl = buf.indexOf(0x0a, pos);
    let end = nl < 0 ? buf.length : nl + 1;
    if (end - start > kMax) {
      if (pos > start) {
        // The next line would overfill the chunk: close it before that line.
        out.push([start, pos]);
        start = pos;
        continue;
      }
      // One overlong line: cut at kMax, backed off to a character start.
      end = start + kMax;
      while (end > start && (buf[end] & 0xc0) === 0x80) end--;
    }
    pos = end;
    if (end - start >= kTarget || pos >= buf.length) {
      out.push([start, end]);
      start = end;
    }
  }
  if (out.length > 1 && out[out.length - 1][1] - out[out.length - 1][0] < kMinTail) {
    const last = out.pop();
    out[out.length - 1][1] = last[1];
  }
  return out;
}

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error('usage: node exact.mjs FILE...');
  process.exit(2);
}
const pkg = createRequire(import.meta.url)('gpt-tokenizer/package.json');
const result = {
  tokenizer: `gpt-tokenizer ${pkg.version} o200k_base`,
  chunking: { target_bytes: kTarget, max_bytes: kMax, min_tail_bytes: kMinTail },
  files: [],
};
for (const path of files.sort()) {
  const buf = readFileSync(path);
  const file = basename(path);
  result.files.push({
    file,
    bytes: buf.length,
    tokens: count(buf),
    chunks: chunks(buf).map(([start, end]) => ({ start, end, tokens: count(buf.subarray(start, end)) })),
  });
}
// One chunk a line: readable in a diff, still plain JSON.
const lines = [];
lines.push('{');
lines.push(`  "tokenizer": ${JSON.stringify(result.tokenizer)},`);
lines.push(`  "chunking": ${JSON.stringify(result.chunking)},`);
lines.push('  "files": [');
result.files.forEach((f, i) => {
  lines.push(`    {"file": ${JSON.stringify(f.file)}, "bytes": ${f.bytes}, "tokens": ${f.tokens}, "chunks": [`);
  f.chunks.forEach((c, j) => lines.push(`      ${JSON.stringify(c)}${j + 1 < f.chunks.length ? ',' : ''}`));
  lines.push(`    ]}${i + 1 < result.files.length ? ',' : ''}`);
});
lines.push('  ]');
lines.push('}');
console.log(lines.join('\n'));
