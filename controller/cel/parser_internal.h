// Internal to the parser (lexer.cc, parser.cc, parser_macros.cc): the token, Lexer and Parser
// classes the parser is split across. Not part of the draco_cel API; include only from those
// files (the public entry point is Parse() in parser.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "controller/cel/ast.h"
#include "controller/cel/parser.h"

namespace draco::cel::parser_internal {

enum class Tok : uint8_t {
  kEof,
  kError,
  kIdent,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kTrue,
  kFalse,
  kNull,
  kIn,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kAnd,
  kOr,
  kNot,
  kPlus,
  kMinus,
  kStar,
  kSlash,
  kPercent,
  kQuestion,
  kColon,
  kDot,
  kComma,
  kLParen,
  kRParen,
  kLBracket,
  kRBracket,
  kLBrace,
  kRBrace,
};

struct Token {
  Tok kind = Tok::kEof;
  int32_t offset = 0;
  std::string text;  // identifier name, literal text, or decoded string payload
  std::string error;
};

// The accumulator variable of comprehensions expanded from macros.
inline constexpr const char* kAccuVar = "@result";

// Splits CEL source into tokens; copyable so the parser can look ahead and back up.
class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token Next();

 private:
  // An identifier or keyword starting at pos_.
  Token LexIdent(Token& t);
  // An operator or punctuation token; `c` is the character at pos_.
  Token LexOperator(Token& t, char c);
  void SkipSpaceAndComments();
  bool StringPrefixAhead() const;
  Token LexNumber(Token& t);
  Token LexString(Token& t);

  // Decodes one escape sequence at pos_ (which points at the backslash).
  bool Unescape(std::string& out, bool bytes, std::string& err);

  std::string_view src_;
  size_t pos_ = 0;
};

// A recursive-descent parser over the CEL grammar that expands macros while parsing. Stops at the
// first syntax error (recorded in `issues`).
class Parser {
 public:
  Parser(std::string_view src, Issues& issues, const ParserOptions& opts, Ast& ast)
      : lexer_(src), issues_(issues), opts_(opts), ast_(ast) {
    Advance();
  }

  std::unique_ptr<Expr> ParseAll();

 private:
  // ---- infrastructure -------------------------------------------------------------------
  void Advance();
  void Error(int32_t offset, std::string msg);
  std::string TokText() const;
  bool Accept(Tok k);
  bool Expect(Tok k, const char* what);
  std::unique_ptr<Expr> NewExpr(ExprKind kind, int32_t offset);
  std::unique_ptr<Expr> NewConst(Value v, int32_t offset);
  std::unique_ptr<Expr> NewIdent(std::string name, int32_t offset);
  std::unique_ptr<Expr> NewCall(std::string fn, int32_t offset,
                                std::vector<std::unique_ptr<Expr>> args);
  template <typename... A>
  std::unique_ptr<Expr> Call(std::string fn, int32_t offset, A... args) {
    std::vector<std::unique_ptr<Expr>> v;
    (v.push_back(std::move(args)), ...);
    return NewCall(std::move(fn), offset, std::move(v));
  }

  struct DepthGuard {
    explicit DepthGuard(Parser* p) : p_(p) {
      if (++p_->depth_ > p_->opts_.max_recursion_depth && !p_->failed_) {
        p_->Error(p_->tok_.offset, "max recursion depth exceeded");
      }
    }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    DepthGuard(DepthGuard&&) = delete;
    DepthGuard& operator=(DepthGuard&&) = delete;
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };

  std::unique_ptr<Expr> Dummy();

  // A relational or arithmetic operator node. cel-go's parser recurses once per nested binary
  // operator of these (left-recursive) grammar rules and fails past 250 levels.
  std::unique_ptr<Expr> Binary(const char* fn, int32_t off, std::unique_ptr<Expr> lhs,
                               std::unique_ptr<Expr> rhs);

  // ---- grammar --------------------------------------------------------------------------
  std::unique_ptr<Expr> ParseExpr();
  std::unique_ptr<Expr> ParseOr();
  std::unique_ptr<Expr> ParseAnd();
  std::unique_ptr<Expr> ParseRelation();
  std::unique_ptr<Expr> ParseAddition();
  std::unique_ptr<Expr> ParseMultiplication();
  std::unique_ptr<Expr> ParseUnary();
  std::vector<std::unique_ptr<Expr>> ParseArgs(Tok close, const char* what);
  std::unique_ptr<Expr> ParseMember();
  static bool IsQualifiedName(const Expr& e);
  std::unique_ptr<Expr> ParsePrimary();
  std::unique_ptr<Expr> ParseInt(bool negative, int32_t off);
  std::unique_ptr<Expr> ParseDouble(bool negative, int32_t off);

  // ---- macros ---------------------------------------------------------------------------
  std::unique_ptr<Expr> GlobalCall(std::string name, int32_t off,
                                   std::vector<std::unique_ptr<Expr>> args);

  bool SimpleName(const std::unique_ptr<Expr>& e, std::string& out);

  std::unique_ptr<Expr> Comprehension(int32_t off, std::unique_ptr<Expr> range, std::string v1,
                                      std::string v2, std::unique_ptr<Expr> init,
                                      std::unique_ptr<Expr> cond, std::unique_ptr<Expr> step,
                                      std::unique_ptr<Expr> result, std::string accu = kAccuVar);

  std::unique_ptr<Expr> Accu(int32_t off);

  std::unique_ptr<Expr> MemberCall(std::unique_ptr<Expr> target, const std::string& name,
                                   int32_t off, std::vector<std::unique_ptr<Expr>> args);

  // all, exists, exists_one / existsOne (one or two iteration variables).
  std::unique_ptr<Expr> ExpandQuantifierMacro(std::unique_ptr<Expr> target, const std::string& name,
                                              int32_t off, std::vector<std::unique_ptr<Expr>> args);
  // map (2 or 3 arguments) and filter.
  std::unique_ptr<Expr> ExpandMapMacro(std::unique_ptr<Expr> target, const std::string& name,
                                       int32_t off, std::vector<std::unique_ptr<Expr>> args);
  // transformList, transformMap and transformMapEntry (3 or 4 arguments).
  std::unique_ptr<Expr> ExpandTransformMacro(std::unique_ptr<Expr> target, const std::string& name,
                                             int32_t off, std::vector<std::unique_ptr<Expr>> args);
  // cel.bind(var, init, expr).
  std::unique_ptr<Expr> ExpandBindMacro(int32_t off, std::vector<std::unique_ptr<Expr>> args);
  // sortBy (ext.Lists v3).
  std::unique_ptr<Expr> ExpandSortByMacro(std::unique_ptr<Expr> target, int32_t off,
                                          std::vector<std::unique_ptr<Expr>> args);
  // optMap and optFlatMap.
  std::unique_ptr<Expr> ExpandOptMapMacro(std::unique_ptr<Expr> target, const std::string& name,
                                          int32_t off, std::vector<std::unique_ptr<Expr>> args);

  std::unique_ptr<Expr> PlainMemberCall(std::unique_ptr<Expr> target, const std::string& name,
                                        int32_t off, std::vector<std::unique_ptr<Expr>> args);

  std::unique_ptr<Expr> CloneExpr(const Expr& e);

  Lexer lexer_;
  Issues& issues_;
  const ParserOptions& opts_;
  Ast& ast_;
  Token tok_;
  int64_t next_id_ = 0;
  int depth_ = 0;
  std::unordered_map<int64_t, int> binary_depth_;
  bool failed_ = false;
};

}  // namespace draco::cel::parser_internal
