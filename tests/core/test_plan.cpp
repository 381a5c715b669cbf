// The plan's matching: by name (missing, extra, shape and dtype mismatches, the summary line that leads them,
// --tensors intersection, --int-policy) and by position (--match order, layer by layer). Every expected plan and
// message is written out by hand from the tensors each case declares.

#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "wavg/error.hpp"
#include "wavg/plan.hpp"

using namespace wavg;

namespace {

// A reader that only declares tensors (and, optionally, layers): planning never reads values.
class ListReader final : public Reader {
 public:
  ListReader(std::string path, std::vector<TensorInfo> tensors, ModelLayers layers = {})
      : m_path(std::move(path)), m_tensors(std::move(tensors)), m_layers(std::move(layers)) {}
  const std::string& path() const override { return m_path; }
  std::string format_name() const override { return "list"; }
  std::string layout() const override { return "list"; }
  const std::vector<TensorInfo>& tensors() const override { return m_tensors; }
  void read(std::size_t, std::uint64_t, std::uint64_t, void*) override { FAIL("the plan read a value"); }
  ModelLayers model_layers() const override { return m_layers; }
  std::map<std::string, std::string> metadata() const override { return {}; }

 private:
  std::string m_path;
  std::vector<TensorInfo> m_tensors;
  ModelLayers m_layers;
};

TensorInfo f32(std::string name, Shape shape) { return {std::move(name), DType::f32, std::move(shape)}; }

// Returns the problems build_plan throws, as "FILE: what" lines, and checks the exit code.
std::vector<std::string> refusal(std::vector<Reader*> inputs, const PlanOptions& options = {}) {
  try {
    build_plan(inputs, options);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::incompatible);
    std::vector<std::string> lines;
    for (const Problem& p : e.problems()) lines.push_back(p.file + ": " + p.what);
    return lines;
  }
  FAIL("build_plan accepted the inputs");
  return {};
}

std::vector<std::string> names(const Plan& plan) {
  std::vector<std::string> out;
  for (const PlanEntry& e : plan.entries) out.push_back(e.info.name);
  return out;
}

}  // namespace

TEST_CASE("plan by name: input 1's order, each input's own index, actions by dtype") {
  ListReader a("a", {f32("w", {2, 3}), f32("b", {3}), {"step", DType::i64, {}}});
  ListReader b("b", {{"step", DType::i64, {}}, f32("b", {3}), f32("w", {2, 3})});
  const Plan plan = build_plan({&a, &b}, {});
  CHECK(names(plan) == std::vector<std::string>{"w", "b", "step"});
  CHECK(plan.entries[0].source == std::vector<std::size_t>{0, 2});
  CHECK(plan.entries[1].source == std::vector<std::size_t>{1, 1});
  CHECK(plan.entries[2].source == std::vector<std::size_t>{2, 0});
  CHECK(plan.entries[0].action == Action::average);
  CHECK(plan.entries[2].action == Action::copy_first);
  CHECK(plan.count(Action::average) == 2);
  CHECK(plan.values(Action::average) == 9);  // 2*3 + 3

  PlanOptions equal;
  equal.int_policy = IntPolicy::equal;
  CHECK(build_plan({&a, &b}, equal).entries[2].action == Action::check_equal);
  PlanOptions error;
  error.int_policy = IntPolicy::error;
  CHECK(refusal({&a, &b}, error) ==
        std::vector<std::string>{"a: step: int64 tensor cannot be averaged (--int-policy error)"});
}

TEST_CASE("plan by name: one mismatch is one line naming the tensor, expected beside found") {
  ListReader a("a.h5", {f32("w", {2, 3}), f32("b", {3})});
  ListReader shape("s.h5", {f32("w", {3, 2}), f32("b", {3})});
  CHECK(refusal({&a, &shape}) == std::vector<std::string>{"s.h5: w: expected shape (2, 3), found (3, 2)"});
  ListReader dtype("d.h5", {f32("w", {2, 3}), {"b", DType::f64, {3}}});
  CHECK(refusal({&a, &dtype}) == std::vector<std::string>{"d.h5: b: expected dtype float32, found float64"});
  ListReader missing("m.h5", {f32("w", {2, 3})});
  CHECK(refusal({&a, &missing}) == std::vector<std::string>{"m.h5: b: missing (present in a.h5)"});
  ListReader extra("e.h5", {f32("w", {2, 3}), f32("b", {3}), f32("c", {1})});
  CHECK(refusal({&a, &extra}) == std::vector<std::string>{"e.h5: c: not in a.h5"});
}

TEST_CASE("plan by name: several mismatches of one input are led by its summary, inputs in order") {
  ListReader a("a", {f32("w", {2, 3}), f32("b", {3}), f32("c", {1})});
  // Input b: w's shape and dtype differ (one tensor), c is missing, d is extra.
  ListReader b("b", {{"w", DType::f16, {3, 2}}, f32("b", {3}), f32("d", {1})});
  ListReader c("c", {f32("w", {2, 3}), f32("b", {4}), f32("c", {1})});
  CHECK(refusal({&a, &b, &c}) ==
        std::vector<std::string>{
            "b: 2 of 3 tensors differ from a (names, shapes, dtypes), and 1 are not in it; first: w: expected shape "
            "(2, 3), found (3, 2)",
            "b: w: expected shape (2, 3), found (3, 2)",
            "b: w: expected dtype float32, found float16",
            "c: b: expected shape (3,), found (4,)",
            "b: c: missing (present in a)",
            "b: d: not in a",
        });
}

TEST_CASE("plan by name: --tensors intersection drops what some input lacks, from any input") {
  ListReader a("a", {f32("w", {2}), f32("only_a", {1}), f32("b", {1})});
  ListReader b("b", {f32("b", {1}), f32("only_b", {1}), f32("w", {2})});
  PlanOptions o;
  o.tensors = TensorMatch::intersection;
  const Plan plan = build_plan({&a, &b}, o);
  CHECK(names(plan) == std::vector<std::string>{"w", "b"});
  CHECK(plan.dropped == std::vector<std::string>{"only_a", "only_b"});
  CHECK(plan.dropped_from_first == std::vector<std::string>{"only_a"});

  ListReader c("c", {f32("x", {1})});
  // c shares no name with a: a different model, said first.
  CHECK(refusal({&a, &c}, o) ==
        std::vector<std::string>{"c: a different model from a: no tensor name in common (a: list; c: list)",
                                 "a: no tensor is common to all inputs; nothing to merge"});
}

TEST_CASE("plan by name: names that differ but pair by position get the --match order hint first") {
  ListReader a("a", {f32("dense/kernel", {2, 3}), f32("dense/bias", {3})});
  ListReader b("b", {f32("dense_1/kernel", {2, 3}), f32("dense_1/bias", {3})});
  const auto lines = refusal({&a, &b});
  REQUIRE(lines.size() == 6);
  CHECK(lines[0] ==
        "a: 4 tensor names differ (listed below), but every input's model tensors pair up with these by "
        "position, with equal shapes: --match order would pair them");
  CHECK(lines[1] ==
        "b: 2 of 2 tensors differ from a (names), and 2 are not in it; first: dense/kernel: missing "
        "(present in a)");

  PlanOptions order;
  order.match = Pairing::order;
  const Plan plan = build_plan({&a, &b}, order);
  CHECK(names(plan) == std::vector<std::string>{"dense/kernel", "dense/bias"});
  CHECK(plan.entries[0].source == std::vector<std::size_t>{0, 0});
  CHECK(plan.entries[1].source == std::vector<std::size_t>{1, 1});
  CHECK(plan.pairing ==
        std::vector<std::string>{"pair: dense/kernel = dense_1/kernel (b)", "pair: dense/bias = dense_1/bias (b)"});

  // A filter matches input 1's names and takes each tensor's partners with it.
  order.exclude = {"*/bias"};
  const Plan filtered = build_plan({&a, &b}, order);
  CHECK(names(filtered) == std::vector<std::string>{"dense/kernel"});
  CHECK(filtered.entries[0].source == std::vector<std::size_t>{0, 0});
}

TEST_CASE("plan by order: layers pair by model order; a class or weight-count mismatch names both layers") {
  // Input 1 lists dense then conv; input 2 the same model with its tensors stored conv first.
  ModelLayers la{LayerOrder::model, {{"dense", "dense", {0, 1}, false}, {"conv", "conv2d", {2}, false}}};
  ListReader a("a", {f32("dense/k", {4, 2}), f32("dense/b", {2}), f32("conv/k", {3, 3})}, la);
  ModelLayers lb{LayerOrder::model, {{"d", "dense", {1, 2}, false}, {"c", "conv2d", {0}, false}}};
  ListReader b("b", {f32("c/k", {3, 3}), f32("d/k", {4, 2}), f32("d/b", {2})}, lb);
  PlanOptions order;
  order.match = Pairing::order;
  const Plan plan = build_plan({&a, &b}, order);
  CHECK(plan.entries[0].source == std::vector<std::size_t>{0, 1});
  CHECK(plan.entries[1].source == std::vector<std::size_t>{1, 2});
  CHECK(plan.entries[2].source == std::vector<std::size_t>{2, 0});

  ModelLayers lc{LayerOrder::model, {{"d", "dense", {0, 1}, false}, {"c", "lstm", {2}, false}}};
  ListReader c("c", {f32("d/k", {4, 2}), f32("d/b", {2}), f32("c/k", {3, 3})}, lc);
  CHECK(refusal({&a, &c}, order) ==
        std::vector<std::string>{
            "c: layer c (lstm) would pair with conv (conv2d) of a: different layer classes (--match order)"});

  ModelLayers ld{LayerOrder::model, {{"d", "dense", {0}, false}, {"c", "conv2d", {1}, false}}};
  ListReader d("d", {f32("d/k", {4, 2}), f32("c/k", {3, 3})}, ld);
  CHECK(refusal({&a, &d}, order) ==
        std::vector<std::string>{"d: layer d (dense) would pair with dense (dense) of a: 1 weights, not 2 "
                                 "(--match order)"});
}

TEST_CASE("plan by order: a shape that differs at the same position names both tensors") {
  ListReader a("a", {f32("x", {2, 3}), f32("y", {3})});
  ListReader b("b", {f32("p", {2, 3}), f32("q", {4})});
  PlanOptions order;
  order.match = Pairing::order;
  CHECK(refusal({&a, &b}, order) ==
        std::vector<std::string>{"b: q is float32 (4,), but y in a is float32 (3,) (--match order)"});
  ListReader c("c", {f32("p", {2, 3})});
  CHECK(refusal({&a, &c}, order) == std::vector<std::string>{"c: has 1 model tensors, a has 2 (--match order)"});
}

TEST_CASE("match_base finds every averaged tensor in the base and names what it lacks") {
  ListReader a("a", {f32("w", {2}), {"step", DType::i64, {}}, f32("b", {1})});
  const Plan plan = build_plan({&a}, {});
  ListReader base("base", {f32("b", {1}), f32("w", {2})});
  CHECK(match_base(plan, base) == std::vector<std::size_t>{1, 0, 0});  // step is not averaged: unused
  ListReader bad("base", {f32("w", {3})});
  try {
    match_base(plan, bad);
    FAIL("match_base accepted a base without b");
  } catch (const Error& e) {
    REQUIRE(e.problems().size() == 2);
    CHECK(e.problems()[0].what == "w: expected shape (2,), found (3,)");
    CHECK(e.problems()[1].what == "b: missing from the base (--base)");
  }
}

// Issue 25: what the codec says a tensor is decides what happens to it.
static TensorInfo with_role(TensorInfo t, Role role, std::string alias_of = {}) {
  t.role = role;
  t.alias_of = std::move(alias_of);
  return t;
}

TEST_CASE("plan roles: a float counter and hyper-parameter are kept, optimizer state follows --optimizer-state") {
  const auto tensors = [](const char* path) {
    return ListReader(path,
                      {with_role(f32("w", {2}), Role::weight), with_role(f32("m", {2}), Role::optimizer_state),
                       with_role(f32("step", {}), Role::counter), with_role(f32("lr", {}), Role::hyper_parameter),
                       with_role(f32("opt/t", {}), Role::weight), with_role({"seed", DType::u32, {2}}, Role::rng)});
  };
  ListReader a = tensors("a"), b = tensors("b"), c = tensors("c");
  Plan plan = build_plan({&a, &b, &c}, {});
  std::vector<Action> actions;
  for (const PlanEntry& e : plan.entries) actions.push_back(e.action);
  // opt/t: a weight whatever its name says (a Keras 3 scalar weight under optimizer/ in a TF2 checkpoint).
  CHECK(actions == std::vector<Action>{Action::average, Action::average, Action::copy_first, Action::copy_first,
                                       Action::average, Action::copy_first});
  PlanOptions newest;
  newest.newest_input = 2;
  plan = build_plan({&a, &b, &c}, newest);
  CHECK(plan.entries[2].copy_from == 2);
  CHECK(plan.entries[3].copy_from == 2);
  CHECK(plan.entries[5].copy_from == 0);  // rng: the template's
  PlanOptions first;
  first.optimizer_state = OptimizerState::first;
  CHECK(build_plan({&a, &b}, first).entries[1].action == Action::copy_first);
  PlanOptions drop;
  drop.optimizer_state = OptimizerState::drop;
  plan = build_plan({&a, &b}, drop);
  CHECK(names(plan) == std::vector<std::string>{"w", "step", "lr", "opt/t", "seed"});
  CHECK(plan.optimizer_dropped == std::vector<std::string>{"m"});
  PlanOptions error;
  error.int_policy = IntPolicy::error;
  // The rng state is the template's whatever the policy.
  CHECK(refusal({&a, &b}, error) ==
        std::vector<std::string>{"a: step: counter cannot be averaged (--int-policy error)",
                                 "a: lr: hyper-parameter cannot be averaged (--int-policy error)"});
}

TEST_CASE("plan roles: the last-resort name rule, and tied names") {
  ListReader plain("p", {f32("optimizer/vars/1", {}), f32("optimizer/vars/2", {3}), f32("dense/kernel", {3})});
  const Plan guessed = build_plan({&plain, &plain}, {});
  CHECK(guessed.entries[0].info.role == Role::hyper_parameter);
  CHECK(guessed.entries[0].role_by_name);
  CHECK(guessed.entries[1].info.role == Role::optimizer_state);
  CHECK(!guessed.entries[2].role_by_name);

  ListReader tied("tied", {f32("emb", {4}), with_role(f32("out", {4}), Role::alias, "emb")});
  ListReader apart("apart", {f32("emb", {4}), f32("out", {4})});
  ListReader dropped("dropped", {f32("emb", {4})});
  Plan plan = build_plan({&tied, &apart}, {});
  CHECK(plan.entries[1].info.alias_of.empty());  // the output holds them apart
  CHECK(plan.entries[1].info.role == Role::weight);
  CHECK(plan.warnings.size() == 1);
  plan = build_plan({&tied, &tied}, {});
  CHECK(plan.entries[1].info.alias_of == "emb");
  // A tied copy the other input leaves out (safetensors drops lm_head.weight): its target stands in for it.
  plan = build_plan({&tied, &dropped}, {});
  CHECK(plan.entries[1].source == std::vector<std::size_t>{1, 0});
  CHECK(plan.entries[1].info.alias_of == "emb");
  plan = build_plan({&dropped, &tied}, {});
  CHECK(names(plan) == std::vector<std::string>{"emb"});
  CHECK(!plan.entries[0].role_by_name);  // an alias states no structure: emb is a weight by what the file is
}

TEST_CASE("plan roles: a kept alias takes its target's action and result; the rule's weights are named") {
  ListReader a("a", {with_role(f32("lr", {}), Role::hyper_parameter), with_role(f32("lr2", {}), Role::alias, "lr"),
                     with_role(f32("m", {2}), Role::optimizer_state), with_role(f32("m2", {2}), Role::alias, "m"),
                     f32("score", {})});
  Plan plan = build_plan({&a, &a}, {});
  CHECK(plan.entries[1].action == Action::copy_first);
  CHECK(plan.entries[1].same_as == 0);
  CHECK(plan.entries[3].action == Action::average);
  CHECK(plan.entries[3].same_as == 2);
  CHECK(plan.entries[0].same_as == k_no_entry);
  CHECK(plan.entries[4].role_by_name);  // outside the structure the codec stated: the rule decided
  PlanOptions first;
  first.optimizer_state = OptimizerState::first;
  CHECK(build_plan({&a, &a}, first).entries[3].action == Action::copy_first);
  PlanOptions drop;
  drop.optimizer_state = OptimizerState::drop;
  CHECK(names(build_plan({&a, &a}, drop)) == std::vector<std::string>{"lr", "lr2", "score"});
}
