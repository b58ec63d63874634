#include "controller/cel/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "controller/cel/parser_internal.h"
#include "controller/cel/unicode.h"

namespace draco::cel::parser_internal {
namespace {

const std::unordered_set<std::string>& ReservedWords() {
  static const auto* words = new std::unordered_set<std::string>{
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  return *words;
}

}  // namespace

std::unique_ptr<Expr> Parser::ParseAll() {
  auto e = ParseExpr();
  if (tok_.kind != Tok::kEof && !failed_) {
    Error(tok_.offset, "Syntax error: extraneous input '" + TokText() + "' expecting <EOF>");
  }
  if (failed_) return nullptr;
  return e;
}

void Parser::Advance() {
  tok_ = lexer_.Next();
  if (tok_.kind == Tok::kError) Error(tok_.offset, "Syntax error: " + tok_.error);
}

void Parser::Error(int32_t offset, std::string msg) {
  if (failed_ && static_cast<int>(issues_.size()) >= opts_.max_errors) return;
  if (!failed_) issues_.Add(std::move(msg), offset);
  failed_ = true;
  // Stop the parse quickly: pretend the input ended.
  tok_.kind = Tok::kEof;
}

std::string Parser::TokText() const {
  switch (tok_.kind) {
    case Tok::kEof:
      return "<EOF>";
    case Tok::kIdent:
    case Tok::kInt:
    case Tok::kUint:
    case Tok::kDouble:
      return tok_.text;
    default:
      return "token";
  }
}

bool Parser::Accept(Tok k) {
  if (tok_.kind == k) {
    Advance();
    return true;
  }
  return false;
}

bool Parser::Expect(Tok k, const char* what) {
  if (tok_.kind == k) {
    Advance();
    return true;
  }
  Error(tok_.offset,
        std::string("Syntax error: mismatched input '") + TokText() + "' expecting " + what);
  return false;
}

std::unique_ptr<Expr> Parser::NewExpr(ExprKind kind, int32_t offset) {
  auto e = std::make_unique<Expr>();
  e->id = ++next_id_;
  e->kind = kind;
  ast_.source_info.positions[e->id] = offset;
  return e;
}

std::unique_ptr<Expr> Parser::NewConst(Value v, int32_t offset) {
  auto e = NewExpr(ExprKind::kConst, offset);
  e->const_value = std::move(v);
  return e;
}

std::unique_ptr<Expr> Parser::NewIdent(std::string name, int32_t offset) {
  auto e = NewExpr(ExprKind::kIdent, offset);
  e->name = std::move(name);
  return e;
}

std::unique_ptr<Expr> Parser::NewCall(std::string fn, int32_t offset,
                                      std::vector<std::unique_ptr<Expr>> args) {
  auto e = NewExpr(ExprKind::kCall, offset);
  e->name = std::move(fn);
  e->args = std::move(args);
  return e;
}

std::unique_ptr<Expr> Parser::Dummy() { return NewConst(Value::Null(), tok_.offset); }

std::unique_ptr<Expr> Parser::Binary(const char* fn, int32_t off, std::unique_ptr<Expr> lhs,
                                     std::unique_ptr<Expr> rhs) {
  auto depth = [this](const Expr& e) {
    auto it = binary_depth_.find(e.id);
    return it == binary_depth_.end() ? 0 : it->second;
  };
  int d = 1 + std::max(depth(*lhs), depth(*rhs));
  auto call = Call(fn, off, std::move(lhs), std::move(rhs));
  binary_depth_[call->id] = d;
  if (d > opts_.max_recursion_depth && !failed_) Error(0, "max recursion depth exceeded");
  return call;
}

std::unique_ptr<Expr> Parser::ParseExpr() {
  DepthGuard g(this);
  if (failed_) return Dummy();
  auto cond = ParseOr();
  if (tok_.kind != Tok::kQuestion) return cond;
  int32_t off = tok_.offset;
  Advance();
  auto a = ParseOr();
  if (!Expect(Tok::kColon, "':'")) return Dummy();
  auto b = ParseExpr();
  return Call("_?_:_", off, std::move(cond), std::move(a), std::move(b));
}

std::unique_ptr<Expr> Parser::ParseOr() {
  auto lhs = ParseAnd();
  while (tok_.kind == Tok::kOr && !failed_) {
    int32_t off = tok_.offset;
    Advance();
    DepthGuard g(this);
    auto rhs = ParseAnd();
    lhs = Call("_||_", off, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::ParseAnd() {
  auto lhs = ParseRelation();
  while (tok_.kind == Tok::kAnd && !failed_) {
    int32_t off = tok_.offset;
    Advance();
    DepthGuard g(this);
    auto rhs = ParseRelation();
    lhs = Call("_&&_", off, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::ParseRelation() {
  auto lhs = ParseAddition();
  while (!failed_) {
    const char* fn = nullptr;
    switch (tok_.kind) {
      case Tok::kEq:
        fn = "_==_";
        break;
      case Tok::kNe:
        fn = "_!=_";
        break;
      case Tok::kLt:
        fn = "_<_";
        break;
      case Tok::kLe:
        fn = "_<=_";
        break;
      case Tok::kGt:
        fn = "_>_";
        break;
      case Tok::kGe:
        fn = "_>=_";
        break;
      case Tok::kIn:
        fn = "@in";
        break;
      default:
        break;
    }
    if (fn == nullptr) break;
    int32_t off = tok_.offset;
    Advance();
    DepthGuard g(this);
    auto rhs = ParseAddition();
    lhs = Binary(fn, off, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::ParseAddition() {
  auto lhs = ParseMultiplication();
  while (!failed_ && (tok_.kind == Tok::kPlus || tok_.kind == Tok::kMinus)) {
    const char* fn = tok_.kind == Tok::kPlus ? "_+_" : "_-_";
    int32_t off = tok_.offset;
    Advance();
    DepthGuard g(this);
    auto rhs = ParseMultiplication();
    lhs = Binary(fn, off, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::ParseMultiplication() {
  auto lhs = ParseUnary();
  while (!failed_ &&
         (tok_.kind == Tok::kStar || tok_.kind == Tok::kSlash || tok_.kind == Tok::kPercent)) {
    const char* fn = tok_.kind == Tok::kStar ? "_*_" : (tok_.kind == Tok::kSlash ? "_/_" : "_%_");
    int32_t off = tok_.offset;
    Advance();
    DepthGuard g(this);
    auto rhs = ParseUnary();
    lhs = Binary(fn, off, std::move(lhs), std::move(rhs));
  }
  return lhs;
}

std::unique_ptr<Expr> Parser::ParseUnary() {
  DepthGuard g(this);
  if (failed_) return Dummy();
  if (tok_.kind == Tok::kNot) {
    int32_t off = tok_.offset;
    int n = 0;
    while (tok_.kind == Tok::kNot) {
      ++n;
      Advance();
    }
    auto operand = ParseMember();
    if (n % 2 == 0) return operand;
    return Call("!_", off, std::move(operand));
  }
  if (tok_.kind == Tok::kMinus) {
    int32_t off = tok_.offset;
    Lexer saved_lexer = lexer_;
    Token saved = tok_;
    Advance();
    if (tok_.kind == Tok::kInt || tok_.kind == Tok::kDouble) {
      // A negative numeric literal (the grammar's `literal: MINUS? NUM_INT`).
      lexer_ = saved_lexer;
      tok_ = saved;
      return ParseMember();
    }
    int n = 1;
    while (tok_.kind == Tok::kMinus) {
      ++n;
      Advance();
    }
    auto operand = ParseMember();
    if (n % 2 == 0) return operand;
    return Call("-_", off, std::move(operand));
  }
  return ParseMember();
}

std::vector<std::unique_ptr<Expr>> Parser::ParseArgs(Tok close, const char* what) {
  std::vector<std::unique_ptr<Expr>> args;
  if (Accept(close)) return args;
  while (!failed_) {
    args.push_back(ParseExpr());
    if (Accept(Tok::kComma)) {
      if (close == Tok::kRBracket && tok_.kind == close) break;  // trailing comma
      continue;
    }
    break;
  }
  Expect(close, what);
  return args;
}

std::unique_ptr<Expr> Parser::ParseMember() {
  auto e = ParsePrimary();
  while (!failed_) {
    if (tok_.kind == Tok::kDot) {
      int32_t off = tok_.offset;
      Advance();
      bool opt = Accept(Tok::kQuestion);
      if (tok_.kind != Tok::kIdent) {
        Error(tok_.offset,
              "Syntax error: mismatched input '" + TokText() + "' expecting IDENTIFIER");
        return Dummy();
      }
      std::string name = tok_.text;
      int32_t name_off = tok_.offset;
      Advance();
      if (!opt && tok_.kind == Tok::kLParen) {
        Advance();
        auto args = ParseArgs(Tok::kRParen, "')'");
        e = MemberCall(std::move(e), name, name_off, std::move(args));
        continue;
      }
      if (opt) {
        e = Call("_?._", off, std::move(e), NewConst(Value::String(name), name_off));
        continue;
      }
      auto sel = NewExpr(ExprKind::kSelect, off);
      sel->name = std::move(name);
      sel->operand = std::move(e);
      e = std::move(sel);
      continue;
    }
    if (tok_.kind == Tok::kLBracket) {
      int32_t off = tok_.offset;
      Advance();
      bool opt = Accept(Tok::kQuestion);
      auto index = ParseExpr();
      if (!Expect(Tok::kRBracket, "']'")) return Dummy();
      e = Call(opt ? "_[?_]" : "_[_]", off, std::move(e), std::move(index));
      continue;
    }
    if (tok_.kind == Tok::kLBrace && IsQualifiedName(*e)) {
      Error(tok_.offset, "unsupported message creation: no message types are declared");
      return Dummy();
    }
    break;
  }
  return e;
}

bool Parser::IsQualifiedName(const Expr& e) {
  if (e.kind == ExprKind::kIdent) return true;
  return e.kind == ExprKind::kSelect && !e.test_only && IsQualifiedName(*e.operand);
}

std::unique_ptr<Expr> Parser::ParsePrimary() {
  DepthGuard g(this);
  if (failed_) return Dummy();
  int32_t off = tok_.offset;
  switch (tok_.kind) {
    case Tok::kMinus: {
      Advance();
      if (tok_.kind == Tok::kInt) return ParseInt(true, off);
      return ParseDouble(true, off);
    }
    case Tok::kInt:
      return ParseInt(false, off);
    case Tok::kDouble:
      return ParseDouble(false, off);
    case Tok::kUint: {
      std::string text = tok_.text;
      Advance();
      errno = 0;
      char* end = nullptr;
      bool hex = text.size() > 2 && (text[1] == 'x' || text[1] == 'X');
      uint64_t v = std::strtoull(text.c_str() + (hex ? 2 : 0), &end, hex ? 16 : 10);
      if (errno == ERANGE) {
        Error(off, "invalid uint literal");
        return Dummy();
      }
      return NewConst(Value::Uint(v), off);
    }
    case Tok::kString: {
      std::string s = std::move(tok_.text);
      Advance();
      return NewConst(Value::String(std::move(s)), off);
    }
    case Tok::kBytes: {
      std::string s = std::move(tok_.text);
      Advance();
      return NewConst(Value::Bytes(std::move(s)), off);
    }
    case Tok::kTrue:
      Advance();
      return NewConst(Value::Bool(true), off);
    case Tok::kFalse:
      Advance();
      return NewConst(Value::Bool(false), off);
    case Tok::kNull:
      Advance();
      return NewConst(Value::Null(), off);
    case Tok::kLParen: {
      Advance();
      auto e = ParseExpr();
      Expect(Tok::kRParen, "')'");
      return e;
    }
    case Tok::kLBracket: {
      Advance();
      auto list = NewExpr(ExprKind::kList, off);
      if (Accept(Tok::kRBracket)) return list;
      while (!failed_) {
        if (Accept(Tok::kQuestion)) {
          list->optional_indices.push_back(static_cast<int>(list->args.size()));
        }
        list->args.push_back(ParseExpr());
        if (Accept(Tok::kComma)) {
          if (tok_.kind == Tok::kRBracket) break;
          continue;
        }
        break;
      }
      Expect(Tok::kRBracket, "']'");
      return list;
    }
    case Tok::kLBrace: {
      Advance();
      auto map = NewExpr(ExprKind::kMap, off);
      if (Accept(Tok::kRBrace)) return map;
      while (!failed_) {
        if (Accept(Tok::kQuestion)) {
          map->optional_indices.push_back(static_cast<int>(map->args.size()));
        }
        map->args.push_back(ParseExpr());
        if (!Expect(Tok::kColon, "':'")) return Dummy();
        map->values.push_back(ParseExpr());
        if (Accept(Tok::kComma)) {
          if (tok_.kind == Tok::kRBrace) break;
          continue;
        }
        break;
      }
      Expect(Tok::kRBrace, "'}'");
      return map;
    }
    case Tok::kDot:
    case Tok::kIdent: {
      bool leading_dot = Accept(Tok::kDot);
      if (tok_.kind != Tok::kIdent) {
        Error(tok_.offset,
              "Syntax error: mismatched input '" + TokText() + "' expecting IDENTIFIER");
        return Dummy();
      }
      std::string name = tok_.text;
      if (ReservedWords().count(name)) {
        Error(tok_.offset, "reserved identifier: " + name);
        return Dummy();
      }
      Advance();
      if (tok_.kind == Tok::kLParen) {
        Advance();
        auto args = ParseArgs(Tok::kRParen, "')'");
        return GlobalCall(leading_dot ? "." + name : name, off, std::move(args));
      }
      return NewIdent(leading_dot ? "." + name : name, off);
    }
    case Tok::kEof:
      Error(off, "Syntax error: mismatched input '<EOF>' expecting expression");
      return Dummy();
    default:
      Error(off, "Syntax error: unexpected token '" + TokText() + "'");
      return Dummy();
  }
}

std::unique_ptr<Expr> Parser::ParseInt(bool negative, int32_t off) {
  std::string text = tok_.text;
  Advance();
  bool hex = text.size() > 2 && (text[1] == 'x' || text[1] == 'X');
  std::string digits = (negative ? "-" : "") + text.substr(hex ? 2 : 0);
  errno = 0;
  char* end = nullptr;
  int64_t v = std::strtoll(digits.c_str(), &end, hex ? 16 : 10);
  if (errno == ERANGE) {
    Error(off, "invalid int literal");
    return Dummy();
  }
  return NewConst(Value::Int(v), off);
}

std::unique_ptr<Expr> Parser::ParseDouble(bool negative, int32_t off) {
  std::string text = (negative ? "-" : "") + tok_.text;
  Advance();
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (errno == ERANGE && std::isinf(v)) {
    Error(off, "invalid double literal");
    return Dummy();
  }
  return NewConst(Value::Double(v), off);
}

}  // namespace draco::cel::parser_internal

namespace draco::cel {

std::string Issues::ToString(std::string_view source, const std::string& description) const {
  SourceInfo info;
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') info.line_offsets.push_back(static_cast<int32_t>(i + 1));
  }
  std::string src(source);
  std::string out;
  for (size_t i = 0; i < issues_.size(); ++i) {
    const Issue& issue = issues_[i];
    auto [line, col] = info.LineColumn(src, issue.offset);
    if (i) out += "\n";
    out += "ERROR: " + description + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " +
           issue.message;
    int32_t start = line == 1 ? 0 : info.line_offsets[static_cast<size_t>(line - 2)];
    size_t end = src.find('\n', static_cast<size_t>(start));
    std::string text = src.substr(static_cast<size_t>(start),
                                  end == std::string::npos ? std::string::npos : end - start);
    out += "\n | " + text + "\n | " + std::string(static_cast<size_t>(col - 1), '.') + "^";
  }
  return out;
}

std::unique_ptr<Ast> Parse(std::string_view source, Issues& issues, const ParserOptions& options) {
  if (CodePointCount(source) > options.expression_size_code_point_limit) {
    issues.Add("expression code point size exceeds limit: size: " +
                   std::to_string(CodePointCount(source)) + ", limit " +
                   std::to_string(options.expression_size_code_point_limit),
               0);
    return nullptr;
  }
  if (!IsValidUtf8(source)) {
    issues.Add("Syntax error: invalid UTF-8 input", 0);
    return nullptr;
  }
  auto ast = std::make_unique<Ast>();
  ast->source = std::string(source);
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\n') ast->source_info.line_offsets.push_back(static_cast<int32_t>(i + 1));
  }
  parser_internal::Parser p(source, issues, options, *ast);
  ast->root = p.ParseAll();
  if (!ast->root) return nullptr;
  return ast;
}

}  // namespace draco::cel
