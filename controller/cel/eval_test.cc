#include <cmath>

#include <gtest/gtest.h>

#include "controller/cel/program.h"
#include "controller/cel/stdlib.h"

namespace draco::cel {
namespace {

class EvalTest : public ::testing::Test {
 protected:
  static const Env& TestEnv() {
    static const Env* env = [] {
      auto* e = new Env();
      AddStandardLibrary(*e);
      e->AddVariable("x", Type::Int());
      e->AddVariable("s", Type::String());
      e->AddVariable("d", Type::Dyn());
      e->AddVariable("m", Type::Map(Type::String(), Type::Dyn()));
      e->AddVariable("l", Type::List(Type::Int()));
      return e;
    }();
    return *env;
  }

  // Evaluates `expr`; returns "error: ..." for runtime errors, "compile: ..." for compile errors.
  std::string Eval(const std::string& expr, uint64_t limit = 0, uint64_t* cost = nullptr) {
    CompileResult c = Compile(TestEnv(), expr);
    if (!c.program) return "compile: " + c.error;
    SimpleActivation act;
    act.Bind("x", Value::Int(7));
    act.Bind("s", Value::String("héllo"));
    act.Bind("d", Value::Uint(7));
    std::vector<std::pair<Value, Value>> entries;
    entries.emplace_back(Value::String("a"), Value::Int(1));
    entries.emplace_back(Value::String("b"), Value::List({Value::String("x"), Value::String("y")}));
    act.Bind("m", Value::Map(std::make_shared<MapValueImpl>(std::move(entries))));
    act.Bind("l", Value::List({Value::Int(3), Value::Int(1), Value::Int(2)}));
    EvalOptions opts;
    opts.cost_limit = limit;
    auto r = c.program->Evaluate(act, opts);
    if (!r.ok()) return "status: " + r.status().message();
    if (cost) *cost = r->cost;
    return r->value.DebugString();
  }
};

TEST_F(EvalTest, Arithmetic) {
  EXPECT_EQ(Eval("1 + 2 * 3"), "7");
  EXPECT_EQ(Eval("x % 4"), "3");
  EXPECT_EQ(Eval("9223372036854775807 + 1"), "error: integer overflow");
  EXPECT_EQ(Eval("-9223372036854775808"), "-9223372036854775808");
  EXPECT_EQ(Eval("1 / 0"), "error: division by zero");
  EXPECT_EQ(Eval("0u - 1u"), "error: unsigned integer overflow");
  EXPECT_EQ(Eval("1.5 * 2.0"), "3");
  EXPECT_EQ(Eval("'a' + 'b'"), "\"ab\"");
  EXPECT_EQ(Eval("[1] + [2]"), "[1, 2]");
}

TEST_F(EvalTest, CompileErrors) {
  EXPECT_EQ(Eval("y").rfind("compile: ERROR: <input>:1:1: undeclared reference to 'y'", 0), 0u);
  EXPECT_EQ(Eval("1 + 'a'").rfind("compile: ERROR: <input>:1:3: found no matching overload for "
                                  "'_+_' applied to '(int, string)'",
                                  0),
            0u);
  EXPECT_EQ(Eval("1 == 1u").rfind("compile:", 0), 0u);
  EXPECT_EQ(Eval("[1, 'a']").rfind("compile:", 0), 0u);
  EXPECT_EQ(Eval("int('x')").rfind("compile:", 0), 0u);
  EXPECT_EQ(Eval("'a'.matches('[')").rfind("compile:", 0), 0u);
}

TEST_F(EvalTest, HeterogeneousEquality) {
  EXPECT_EQ(Eval("d == 7"), "true");
  EXPECT_EQ(Eval("d == 7.0"), "true");
  EXPECT_EQ(Eval("dyn('a') == 1"), "false");
  EXPECT_EQ(Eval("d < 8.5"), "true");
  EXPECT_EQ(Eval("1 < 2u"), "true");
}

TEST_F(EvalTest, LogicAbsorbsErrors) {
  EXPECT_EQ(Eval("1/0 == 1 || true"), "true");
  EXPECT_EQ(Eval("true || 1/0 == 1"), "true");
  EXPECT_EQ(Eval("1/0 == 1 && false"), "false");
  EXPECT_EQ(Eval("1/0 == 1 && true"), "error: division by zero");
  EXPECT_EQ(Eval("m.c == 1 || m.a == 1"), "true");
  EXPECT_EQ(Eval("m.c == 1"), "error: no such key: c");
}

TEST_F(EvalTest, MacrosAndMaps) {
  EXPECT_EQ(Eval("l.all(i, i > 0)"), "true");
  EXPECT_EQ(Eval("l.exists(i, i == 2)"), "true");
  EXPECT_EQ(Eval("l.exists_one(i, i > 1)"), "false");
  EXPECT_EQ(Eval("l.map(i, i * 2)"), "[6, 2, 4]");
  EXPECT_EQ(Eval("l.map(i, i > 1, i * 2)"), "[6, 4]");
  EXPECT_EQ(Eval("l.filter(i, i > 1)"), "[3, 2]");
  EXPECT_EQ(Eval("has(m.a) && !has(m.z)"), "true");
  EXPECT_EQ(Eval("'a' in m && 2 in l"), "true");
  EXPECT_EQ(Eval("m.b[1]"), "\"y\"");
  EXPECT_EQ(Eval("cel.bind(y, x + 1, y * y)"), "64");
  EXPECT_EQ(Eval("cel.bind(y, 1/0, true)"), "true");
  EXPECT_EQ(Eval("[1, 2].all(i, v, i < v)"), "true");
  EXPECT_EQ(Eval("{'a': 1}.transformMap(k, v, v + 1)"), "{\"a\": 2}");
  EXPECT_EQ(Eval("[0, 1].exists(i, 1 / i == 1)"), "true");
  EXPECT_EQ(Eval("[1, 0].all(i, 1 / i == 1)"), "error: division by zero");
}

TEST_F(EvalTest, Strings) {
  EXPECT_EQ(Eval("size(s)"), "5");
  EXPECT_EQ(Eval("s.charAt(1)"), "\"é\"");
  EXPECT_EQ(Eval("s.indexOf('l')"), "2");
  EXPECT_EQ(Eval("s.lastIndexOf('l')"), "3");
  EXPECT_EQ(Eval("'A,B'.lowerAscii().split(',')"), "[\"a\", \"b\"]");
  EXPECT_EQ(Eval("s.substring(1, 3)"), "\"él\"");
  EXPECT_EQ(Eval("s.substring(3, 1)").rfind("error:", 0), 0u);
  EXPECT_EQ(Eval("'  x '.trim()"), "\"x\"");
  EXPECT_EQ(Eval("['a', 'b'].join('-')"), "\"a-b\"");
  EXPECT_EQ(Eval("'abc'.matches('^a.c$')"), "true");
  EXPECT_EQ(Eval("'a1b22'.findAll('[0-9]+')"), "[\"1\", \"22\"]");
  EXPECT_EQ(Eval("string(1.5) + string(2u) + string(100000000.0)"), "\"1.521e+08\"");
}

TEST_F(EvalTest, ListsAndSets) {
  EXPECT_EQ(Eval("l.sort()"), "[1, 2, 3]");
  EXPECT_EQ(Eval("l.max() + l.min() + l.sum()"), "10");
  EXPECT_EQ(Eval("l.isSorted()"), "false");
  EXPECT_EQ(Eval("l.indexOf(1)"), "1");
  EXPECT_EQ(Eval("l.slice(1, 3)"), "[1, 2]");
  EXPECT_EQ(Eval("[[1], [2, 3]].flatten()"), "[1, 2, 3]");
  EXPECT_EQ(Eval("[1, 1, 2].distinct()"), "[1, 2]");
  EXPECT_EQ(Eval("sets.contains(l, [1, 2])"), "true");
  EXPECT_EQ(Eval("sets.intersects(l, [9])"), "false");
  EXPECT_EQ(Eval("l.includes(3) && 3.includes(3)"), "true");
  EXPECT_EQ(Eval("lists.range(3)"), "[0, 1, 2]");
}

TEST_F(EvalTest, Optionals) {
  EXPECT_EQ(Eval("m.?a.orValue(5)"), "1");
  EXPECT_EQ(Eval("m.?z.orValue(5)"), "5");
  EXPECT_EQ(Eval("m[?'z'].hasValue()"), "false");
  EXPECT_EQ(Eval("optional.of(1).optMap(v, v + 1).value()"), "2");
  EXPECT_EQ(Eval("[?optional.none(), ?optional.of(2)]"), "[2]");
}

TEST_F(EvalTest, Conversions) {
  EXPECT_EQ(Eval("int('42') + int(2.9) + int(d)"), "51");
  EXPECT_EQ(Eval("uint(x)"), "7u");
  EXPECT_EQ(Eval("double('1e3')"), "1000");
  EXPECT_EQ(Eval("bool('true')"), "true");
  EXPECT_EQ(Eval("type(1) == int && type('a') == string"), "true");
  EXPECT_EQ(Eval("int(dyn(1e30))").rfind("compile:", 0), 0u);  // folded at plan time
  EXPECT_EQ(Eval("int(double(x) * 1e30)"), "error: integer overflow");
}

TEST_F(EvalTest, CostMatchesCelGo) {
  uint64_t cost = 0;
  Eval("x == 1", 0, &cost);
  EXPECT_EQ(cost, 2u);  // ident 1 + equality 1
  Eval("m.a == 1", 0, &cost);
  EXPECT_EQ(cost, 3u);  // ident 1 + select 1 + equality 1
  Eval("has(m.a)", 0, &cost);
  EXPECT_EQ(cost, 1u);  // presence tests cost only their qualifier
  Eval("l.all(i, i > 0)", 0, &cost);
  EXPECT_EQ(cost, 1u + 3u * 5u + 1u);
}

TEST_F(EvalTest, CostLimitAborts) {
  EXPECT_EQ(Eval("lists.range(1000).map(i, lists.range(1000).map(j, i + j)).size() > 0", 1000000),
            "status: operation cancelled: actual cost limit exceeded");
  EXPECT_EQ(Eval("x == 1 || x == 7", 3), "status: operation cancelled: actual cost limit exceeded");
  EXPECT_EQ(Eval("x == 1 || x == 7", 4), "true");
}

}  // namespace
}  // namespace draco::cel
