"""ctxdb: an embedded, single-file context database for AI agents.

    import ctxdb
    with ctxdb.open("agent.ctxdb") as db:
        s = db.create_session(agent_id="coder")
        db.append(s["id"], type="UserPromptSubmitted", actor="user",
                  payload={"text": "hi"})
        for event in db.events(s["id"]):
            print(event["seq"], event["type"])

A thin ctypes binding over the C ABI (include/ctxdb/ctxdb.h); the shared
library is found as described in ctxdb._loader (CTXDB_LIB_PATH first).
"""
from ._database import (Database, EventIterator, abi_version, open, version,
                        version_number)
from ._artifact_writer import ArtifactWriter
from ._database import count_tokens, encode_tokens  # Tokenizer
from ._loader import (EXPECTED_ABI as ABI_VERSION, AbiMismatch, LibraryError,
                      LibraryNotFound)
from .errors import (Busy, BudgetExceeded, CheckFailed, Conflict, Corrupt, Error,
                     InternalError, InvalidInput, IOFailure, Misuse, NotADatabase,
                     NotFound, OutOfMemory, ReadOnly, SchemaError)
from .types import (Anchor, AnchorCheck, AnchorHead, ArtifactCheck, BrokenArtifact,
                    PurgedPayload)
from .types import (Artifact, ArtifactLine, ArtifactMatch, ArtifactPreview,
                    ArtifactRef, ArtifactSearch, BatchResult, Branch, BrokenLink, Children, Event,
                    EventInput, FileChange, FileInfo, FileReadRef,
                    FileWriteRef, ImportResult, Memory, MemoryForgetResult,
                    IndexMerge, MemoryRetrieval, Message, MessageBlock,
                    OptimizeReport, RebuildReport, Session, SessionInput, State, Stats,
                    TableChecksum, ToolCall, ToolCallResult, TranscriptFile,
                    TranscriptImportResult, VerifyReport)
from .types import (Bundle, BundleBudget, BundleExclusion, BundleRedaction, BundleSegment,
                    BundleSource, CompileRequest, Instruction, ToolSpec)
from .types import SearchHit, SearchResult

__version__ = "0.1.0"

__all__ = [
    "open", "Database", "EventIterator", "ArtifactWriter", "version", "version_number",
    "abi_version", "ABI_VERSION",
    "Error", "Misuse", "InvalidInput", "NotFound", "Conflict", "Busy",
    "BudgetExceeded", "CheckFailed", "Corrupt", "IOFailure", "OutOfMemory",
    "SchemaError", "ReadOnly", "InternalError", "NotADatabase",
    "LibraryError", "LibraryNotFound", "AbiMismatch",
    "Event", "EventInput", "Session", "SessionInput", "BatchResult",
    "BrokenLink", "VerifyReport", "PurgedPayload", "ArtifactCheck", "BrokenArtifact",
    "Anchor", "AnchorHead", "AnchorCheck", "ImportResult", "RebuildReport", "OptimizeReport",
    "TranscriptFile", "TranscriptImportResult",
    "IndexMerge",
    "TableChecksum", "Branch", "Children", "Message", "MessageBlock",
    "ToolCall", "ToolCallResult", "FileInfo", "FileReadRef", "FileWriteRef",
    "FileChange", "State", "Stats", "Artifact", "ArtifactRef",
    "ArtifactPreview", "ArtifactLine", "ArtifactMatch", "ArtifactSearch",
    "CompileRequest", "Instruction", "ToolSpec", "Bundle", "BundleBudget",
    "BundleSegment", "BundleSource", "BundleExclusion", "BundleRedaction",
    "SearchHit", "SearchResult",
    "Memory", "MemoryRetrieval", "MemoryForgetResult",
    "count_tokens", "encode_tokens",
]
