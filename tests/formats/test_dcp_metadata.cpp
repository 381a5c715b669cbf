// A DCP .metadata written by wavg (formats/dcp/dcp_metadata_writer.cpp) read back by the restricted unpickler:
// torch 2.15's own .metadata of the two-rank sample, parsed, written again and parsed again, holds the same items,
// chunks, storages, properties and planner_data paths, whose values are checked against what torch wrote (read with
// Python's pickle: samples/dcp/README.md); a hand-made one covers the older five-element properties, a negative list
// index, no version and no planner_data, an item without a planner_data entry; an entry that is no path is refused.
#include <doctest/doctest.h>

#include "dcp/dcp_metadata.hpp"
#include "wavg/error.hpp"
#include "wavg/mapped_file.hpp"

using namespace wavg;
using namespace wavg::dcp;

namespace {

Metadata parse(const std::string& bytes) {
  return parse_metadata("test.metadata", reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size());
}

bool same_storage(const Storage& a, const Storage& b) {
  return a.file == b.file && a.offset == b.offset && a.length == b.length;
}

void check_same(const Metadata& a, const Metadata& b) {
  CHECK(a.planner_data == b.planner_data);
  CHECK(a.version == b.version);
  REQUIRE(a.items.size() == b.items.size());
  for (std::size_t i = 0; i < a.items.size(); ++i) {
    const Item &x = a.items[i], &y = b.items[i];
    INFO(x.name);
    CHECK(x.name == y.name);
    CHECK(x.tensor == y.tensor);
    CHECK(x.role == y.role);
    CHECK(x.planned == y.planned);
    CHECK(x.planner.size() == y.planner.size());
    for (std::size_t p = 0; p < std::min(x.planner.size(), y.planner.size()); ++p) {
      CHECK(x.planner[p].index == y.planner[p].index);
      CHECK(x.planner[p].number == y.planner[p].number);
      CHECK(x.planner[p].key == y.planner[p].key);
    }
    if (!x.tensor) {
      CHECK(same_storage(x.where, y.where));
      continue;
    }
    CHECK(x.dtype == y.dtype);
    CHECK(x.shape == y.shape);
    CHECK(x.properties.layout == y.properties.layout);
    CHECK(x.properties.requires_grad == y.properties.requires_grad);
    CHECK(x.properties.memory_format == y.properties.memory_format);
    CHECK(x.properties.pin_memory == y.properties.pin_memory);
    CHECK(x.properties.has_strides == y.properties.has_strides);
    CHECK(x.properties.strides == y.properties.strides);
    REQUIRE(x.chunks.size() == y.chunks.size());
    for (std::size_t c = 0; c < x.chunks.size(); ++c) {
      CHECK(x.chunks[c].offsets == y.chunks[c].offsets);
      CHECK(x.chunks[c].sizes == y.chunks[c].sizes);
      CHECK(same_storage(x.chunks[c].where, y.chunks[c].where));
    }
  }
}

const Item& find(const Metadata& m, const std::string& name) {
  for (const Item& it : m.items)
    if (it.name == name) return it;
  FAIL("no item " << name);
  return m.items.front();
}

}  // namespace

TEST_CASE("a torch-written .metadata survives wavg's writer and the restricted unpickler") {
  const MappedFile file(WAVG_SAMPLES_DIR "/dcp/run/step-300/.metadata");
  const Metadata torch_meta = parse_metadata(file.path(), file.data(), file.size());
  const Metadata again = parse(metadata_pickle(torch_meta, "out"));
  check_same(torch_meta, again);

  // What torch 2.15 wrote (pickle.load in its venv).
  CHECK(again.version == "1.0.0");
  CHECK(again.planner_data);
  const Item& fc1 = find(again, "model.fc1.weight");
  CHECK(fc1.shape == Shape{5, 3});
  CHECK(fc1.properties.layout == "torch.strided");
  CHECK(fc1.properties.has_strides);
  CHECK(fc1.properties.strides == Shape{3, 1});
  REQUIRE(fc1.chunks.size() == 2);
  CHECK(fc1.chunks[1].offsets == Shape{3, 0});
  CHECK(fc1.chunks[1].sizes == Shape{2, 3});
  CHECK(fc1.chunks[1].where.file == "__1_0.distcp");
  CHECK(fc1.chunks[1].where.offset == 15132);
  CHECK(fc1.chunks[1].where.length == 1577);
  const Item& lr = find(again, "optim.param_groups.0.lr");
  CHECK(!lr.tensor);
  CHECK(lr.where.offset == 0);
  CHECK(lr.where.length == 1261);
  REQUIRE(lr.planner.size() == 4);  // ('optim', 'param_groups', 0, 'lr'): a list index
  CHECK(lr.planner[2].index);
  CHECK(lr.planner[2].number == 0);
  CHECK(lr.planner[3].key == "lr");
  const Item& step = find(again, "optim.state.0.step");  // ('optim', 'state', '0', 'step'): a dict key
  REQUIRE(step.planner.size() == 4);
  CHECK(!step.planner[2].index);
  CHECK(step.planner[2].key == "0");
  CHECK(step.role == Role::counter);
}

TEST_CASE("a hand-made .metadata: five-element properties, no planner_data, no version") {
  Metadata m;
  Item t;
  t.name = "w";
  t.tensor = true;
  t.dtype = DType::bf16;
  t.shape = {4, 2};
  t.properties.requires_grad = true;
  t.properties.memory_format = 2;
  t.chunks = {{{0, 0}, {4, 1}, {"__0_0.distcp", 0, 700}}, {{0, 1}, {4, 1}, {"__1_0.distcp", 1u << 31, 5000000000}}};
  Item b;
  b.name = "v";
  b.where = {"__1_0.distcp", 0, 12};
  m.items = {t, b};
  const Metadata again = parse(metadata_pickle(m, "out"));
  check_same(m, again);
  CHECK(!again.version);
  CHECK(!again.items[0].properties.has_strides);

  m.planner_data = true;
  m.items[0].planner = {{false, 0, "w"}, {true, -1, {}}};
  m.items[0].planned = true;
  m.version = "1.0.0";
  check_same(m, parse(metadata_pickle(m, "out")));  // "v" had no entry and gets none
  m.items[1].planned = true;
  CHECK_THROWS_AS(metadata_pickle(m, "out"), Error);  // "v"'s entry was no path of keys
  m.items[1].planner = {{false, 0, "v"}};
  check_same(m, parse(metadata_pickle(m, "out")));
}
