'use strict';
// ArtifactWriter: the streaming artifact put (ctxdb_artifact_writer_*), for
// content too large to hold in memory. write() pieces, then commit() for
// the artifact, or abort(): nothing is stored unless it commits, and a
// writer collected uncommitted aborts. While it is open, other calls on its
// Database throw (CTXDB_MISUSE): open a second Database to use the file
// meanwhile.
const { call, CtxdbError, codes } = require('./errors');
const check = require('./check');

class ArtifactWriter {
  #native;
  #handle;

  /** @internal Database.artifactWriter() makes writers. */
  constructor(nativeDb, handle) {
    this.#native = nativeDb;
    this.#handle = handle;
    /** The artifact, once committed. */
    this.artifact = undefined;
  }

  #live() {
    if (this.#handle === null) {
      throw new CtxdbError('the artifact writer is closed (committed or aborted)', codes.MISUSE);
    }
    return this.#handle;
  }

  /** Appends a string (as UTF-8), a Buffer or a Uint8Array; returns this. */
  write(data) {
    if (typeof data === 'string') check.wellFormed(data, 'data');
    else if (!check.isBytes(data)) {
      throw new TypeError(`data must be a string, a Buffer or a Uint8Array, got ${check.describe(data)}`);
    }
    const handle = this.#live();
    call(() => this.#native.artifactWriterWrite(handle, data));
    return this;
  }

  /** Stores what was written; returns the artifact and closes the writer. */
  commit() {
    const handle = this.#live();
    try {
      this.artifact = JSON.parse(call(() => this.#native.artifactWriterCommit(handle)));
      return this.artifact;
    } finally {
      this.abort(); // frees the writer; after a commit there is nothing to drop
    }
  }

  /** Drops everything written; closes the writer. A no-op once closed. */
  abort() {
    if (this.#handle === null) return;
    const handle = this.#handle;
    this.#handle = null;
    this.#native.artifactWriterFree(handle);
  }

  /** Whether the writer was committed or aborted. */
  get closed() {
    return this.#handle === null;
  }
}

module.exports = { ArtifactWriter };
