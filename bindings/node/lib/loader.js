'use strict';
// Finds and loads the native addon (ctxdb.node), then refuses it unless the
// libctxdb it loaded speaks the ABI this binding was written for. Search
// order: $CTXDB_NODE_ADDON, bindings/node/build/ctxdb.node (copied there by
// CMake after each build), ../../build*/bindings/node/ctxdb.node (the newest
// of the project's build trees).
const fs = require('node:fs');
const path = require('node:path');

/** The ctxdb_abi_version() this binding needs. */
const NEEDED_ABI = 1;

const packageDir = path.resolve(__dirname, '..');

function candidates(env = process.env) {
  if (env.CTXDB_NODE_ADDON) return [path.resolve(env.CTXDB_NODE_ADDON)];
  const list = [path.join(packageDir, 'build', 'ctxdb.node')];
  const root = path.resolve(packageDir, '..', '..');
  let trees = [];
  try {
    trees = fs.readdirSync(root, { withFileTypes: true })
      .filter((d) => d.isDirectory() && d.name.startsWith('build'))
      .map((d) => path.join(root, d.name, 'bindings', 'node', 'ctxdb.node'))
      .filter((f) => fs.existsSync(f))
      .sort((a, b) => fs.statSync(b).mtimeMs - fs.statSync(a).mtimeMs);
  } catch {
    // not inside the source tree: only the paths above
  }
  return list.concat(trees);
}

// Throws unless the addon reports the ABI this binding needs.
function checkAbi(addon, file) {
  const found = typeof addon.abiVersion === 'function' ? addon.abiVersion() : undefined;
  if (found !== NEEDED_ABI) {
    throw new Error(
      `ctxdb: the library loaded by ${file} has ABI version ${found}, ` +
      `but this binding needs ABI version ${NEEDED_ABI} (libctxdb.so.${NEEDED_ABI}); ` +
      'rebuild the addon against a matching libctxdb');
  }
  return addon;
}

function load(env = process.env) {
  const tried = candidates(env);
  const file = tried.find((f) => fs.existsSync(f));
  if (!file) {
    throw new Error(
      'ctxdb: the native addon ctxdb.node was not found; build it with CMake ' +
      '(cmake --build <build> --target ctxdb_node) or set CTXDB_NODE_ADDON. Tried:\n  ' +
      tried.join('\n  '));
  }
  // eslint-disable-next-line import/no-dynamic-require
  return checkAbi(require(file), file);
}

module.exports = { NEEDED_ABI, candidates, checkAbi, load };
