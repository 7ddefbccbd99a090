#include "log/anchor.hpp"

#include "error.hpp"
#include "store/store.hpp"
#include "util/sha256.hpp"
#include "json/json_writer.hpp"

#include <SQLiteCpp/SQLiteCpp.h>

#include <cstring>
#include <vector>

namespace ctxdb::log {

namespace {

constexpr char kFormat[] = "ctxdb.anchor.v1";

constexpr char kHashesInOrder[] = "SELECT hash FROM events ORDER BY pos LIMIT ?";
constexpr char kEventCount[] = "SELECT COUNT(*) FROM events";
// Each chain's last event, read from the events themselves (not from the
// chains table's record of it), in session id order so that the same file
// always gives the same anchor.
constexpr char kHeads[] = "SELECT c.session_id,e.seq,e.hash FROM "
                          "(SELECT session_no,MAX(seq) AS seq FROM events GROUP BY session_no) m "
                          "JOIN events e ON e.session_no=m.session_no AND e.seq=m.seq "
                          "JOIN chains c ON c.session_no=m.session_no ORDER BY c.session_id";
constexpr char kEventAt[] = "SELECT e.hash FROM events e JOIN chains c ON "
                            "c.session_no=e.session_no WHERE c.session_id=? AND e.seq=?";

util::Digest column_digest(const SQLite::Column &c) {
  util::Digest d{};
  if (c.getBytes() == int(d.size())) std::memcpy(d.data(), c.getBlob(), d.size());
  return d;
}

// RFC 6962 §2.1's Merkle Tree Hash, built as the leaves arrive: the stack
// holds the roots of complete subtrees of decreasing size, so memory stays
// O(log n). Leaves and nodes hash with distinct prefixes (0x00, 0x01), so
// no leaf can pose as a node.
class MerkleTree {
public:
  void add(const util::Digest &leaf) {
    static constexpr uint8_t kLeaf = 0x00;
    Node n{hash_.update(&kLeaf, 1).update(leaf).finish(), 1};
    while (!stack_.empty() && stack_.back().size == n.size) {
      n = {join(stack_.back().hash, n.hash), n.size * 2};
      stack_.pop_back();
    }
    stack_.push_back(n);
  }

  // The root of every leaf added: the subtrees joined right to left, which
  // is the RFC's split at the largest power of two below the size.
  util::Digest root() {
    if (stack_.empty()) return util::sha256("");
    util::Digest h = stack_.back().hash;
    for (size_t i = stack_.size() - 1; i-- > 0;) h = join(stack_[i].hash, h);
    return h;
  }

private:
  struct Node {
    util::Digest hash;
    int64_t size;
  };
  util::Digest join(const util::Digest &left, const util::Digest &right) {
    static constexpr uint8_t kNode = 0x01;
    return hash_.update(&kNode, 1).update(left).update(right).finish();
  }
  util::Sha256 hash_;
  std::vector<Node> stack_;
};

struct Root {
  int64_t events = 0;
  util::Digest root{};
};

// The Merkle root over the hashes of the first `limit` events in append
// order (every event when limit < 0).
Root root_of(store::Store &store, int64_t limit) {
  MerkleTree tree;
  Root r;
  auto q = store.statement(kHashesInOrder);
  q->bind(1, limit);
  while (q->executeStep()) {
    tree.add(column_digest(q->getColumn(0)));
    ++r.events;
  }
  r.root = tree.root();
  return r;
}

struct Head {
  std::string session_id;
  int64_t seq = 0;
  util::Digest hash{};
};

util::Digest digest_of(simdjson::dom::element hex) {
  util::Digest d{};
  util::from_hex(std::string_view(hex), d); // the schema checked the digits
  return d;
}

std::vector<Head> heads_of(simdjson::dom::element anchor) {
  std::vector<Head> out;
  for (simdjson::dom::element h : simdjson::dom::array(anchor["heads"]))
    out.push_back(
        {std::string(std::string_view(h["session_id"])), int64_t(h["seq"]), digest_of(h["hash"])});
  return out;
}

AnchorCheck fail(int64_t events, std::string problem) {
  return {false, events, std::move(problem)};
}

// Every anchored head must still be in its chain, unchanged.
std::optional<std::string> check_heads(store::Store &store, const std::vector<Head> &heads) {
  auto q = store.statement(kEventAt);
  for (const Head &h : heads) {
    q->reset();
    store::bind_text(*q, 1, h.session_id);
    q->bind(2, h.seq);
    std::string at =
        "session '" + h.session_id + "': the anchored head, seq " + std::to_string(h.seq) + ", ";
    if (!q->executeStep())
      return at + "is missing (the session or the end of its chain was deleted)";
    if (column_digest(q->getColumn(0)) != h.hash)
      return at + "differs from the anchored one (the chain was rewritten)";
  }
  return std::nullopt;
}

} // namespace

std::string anchor_json(store::Store &store, simdjson::dom::element) {
  store::Store::ReadTransaction snapshot(store);
  Root r = root_of(store, -1);
  std::vector<Head> heads;
  auto q = store.statement(kHeads);
  while (q->executeStep())
    heads.push_back({q->getColumn(0).getString(), int64_t(q->getColumn(1).getInt64()),
                     column_digest(q->getColumn(2))});
  json::JsonWriter w;
  w.begin_object()
      .field("format", kFormat)
      .field("events", r.events)
      .field("root", util::to_hex(r.root))
      .field("sessions", int64_t(heads.size()));
  w.key("heads").begin_array();
  for (const Head &h : heads)
    w.begin_object()
        .field("session_id", h.session_id)
        .field("seq", h.seq)
        .field("hash", util::to_hex(h.hash))
        .end_object();
  w.end_array().end_object();
  return w.take();
}

AnchorCheck check_anchor(store::Store &store, simdjson::dom::element anchor) {
  store::embedded_schema("json/anchor.schema.json").validate(anchor, "anchor");
  int64_t events = int64_t(anchor["events"]);
  util::Digest root = digest_of(anchor["root"]);
  std::vector<Head> heads = heads_of(anchor);
  if (int64_t(anchor["sessions"]) != int64_t(heads.size()))
    throw Error(Code::kInvalidArg, "anchor: \"sessions\" is not the number of \"heads\"");

  store::Store::ReadTransaction snapshot(store);
  if (auto problem = check_heads(store, heads)) return fail(events, *problem);
  Root now = root_of(store, events);
  if (now.events < events) {
    auto q = store.statement(kEventCount);
    q->executeStep();
    return fail(events, "the file holds " + std::to_string(int64_t(q->getColumn(0).getInt64())) +
                            " events and the anchor covers " + std::to_string(events) +
                            " (events were deleted, or the log lost its last commits)");
  }
  if (now.root != root)
    return fail(events, "the first " + std::to_string(events) +
                            " events in append order are not the anchored ones (an event was "
                            "changed, deleted, inserted or moved in the append order)");
  return {true, events, {}};
}

} // namespace ctxdb::log
