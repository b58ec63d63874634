#include "controller/cel/parser.h"

#include <gtest/gtest.h>

namespace draco::cel {
namespace {

struct Case {
  const char* input;
  const char* ast;    // expected AstDebugString, or "" when an error is expected
  const char* error;  // expected Issues::ToString
};

std::string ParseToString(const std::string& in, std::string* error) {
  Issues issues;
  auto ast = Parse(in, issues);
  if (!ast) {
    *error = issues.ToString(in);
    return "";
  }
  return AstDebugString(*ast->root);
}

TEST(ParserTest, Golden) {
  const Case cases[] = {
      {"a + 1", "_+_(a^#1:ident#, 1^#2:int64#)^#3:call#", ""},
      {"-1", "-1^#1:int64#", ""},
      {"!!a", "a^#1:ident#", ""},
      {"a.b[0]", "_[_](a^#1:ident#.b^#2:select#, 0^#3:int64#)^#4:call#", ""},
      {"has(a.b)", "a^#1:ident#.b~test-only~^#2:select#", ""},
      {"x ? 1u : 2.5", "_?_:_(x^#1:ident#, 1u^#2:uint64#, 2.5^#3:double#)^#4:call#", ""},
      {"f(1, 'a')", "f(1^#1:int64#, \"a\"^#2:string#)^#3:call#", ""},
      {"a.?b", "_?._(a^#1:ident#, \"b\"^#2:string#)^#3:call#", ""},
      {"[1, 2,]", "[1^#2:int64#, 2^#3:int64#]^#1:list#", ""},
      {"{'k': v}", "{\"k\"^#2:string#: v^#3:ident#}^#1:map#", ""},
      {"l.exists(x, x > 0)",
       "__comprehension__(x, l^#1:ident#, @result, false^#12:bool#, "
       "@not_strictly_false(!_(@result^#9:ident#)^#10:call#)^#11:call#, "
       "_||_(@result^#7:ident#, _>_(x^#3:ident#, 0^#4:int64#)^#5:call#)^#8:call#, "
       "@result^#6:ident#)^#13:comprehension#",
       ""},
      {"a +", "",
       "ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' expecting expression\n | a +\n "
       "| ...^"},
      {"1 + \n  )", "",
       "ERROR: <input>:2:3: Syntax error: unexpected token 'token'\n |   )\n | ..^"},
      {"9223372036854775808", "",
       "ERROR: <input>:1:1: invalid int literal\n | 9223372036854775808\n | ^"},
      {"has(a)", "", "ERROR: <input>:1:5: invalid argument to has() macro\n | has(a)\n | ....^"},
      {"l.all(x.y, true)", "",
       "ERROR: <input>:1:8: argument must be a simple name\n | l.all(x.y, true)\n | .......^"},
      {"'\\q'", "", "ERROR: <input>:1:1: Syntax error: invalid escape sequence\n | '\\q'\n | ^"},
      {"var", "", "ERROR: <input>:1:1: reserved identifier: var\n | var\n | ^"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.input);
    std::string error;
    std::string ast = ParseToString(c.input, &error);
    EXPECT_EQ(ast, c.ast);
    EXPECT_EQ(error, c.error);
  }
}

TEST(ParserTest, StringLiterals) {
  std::string error;
  EXPECT_EQ(ParseToString(R"("\x41\u00e9\101")", &error), "\"AéA\"^#1:string#");
  EXPECT_EQ(ParseToString(R"(r"\d")", &error), "\"\\\\d\"^#1:string#");
  EXPECT_EQ(ParseToString("'''a\nb'''", &error), "\"a\nb\"^#1:string#");
  EXPECT_EQ(ParseToString("b'\\xff'", &error), "b\"\xff\"^#1:bytes#");
}

TEST(ParserTest, RecursionLimit) {
  std::string deep(300, '(');
  deep += "1";
  deep += std::string(300, ')');
  Issues issues;
  EXPECT_EQ(Parse(deep, issues), nullptr);
  EXPECT_NE(issues.ToString(deep).find("max recursion depth exceeded"), std::string::npos);
}

TEST(ParserTest, SizeLimit) {
  ParserOptions opts;
  opts.expression_size_code_point_limit = 10;
  Issues issues;
  EXPECT_EQ(Parse("1 + 2 + 3 + 4", issues, opts), nullptr);
}

}  // namespace
}  // namespace draco::cel
