#include "controller/cel/parser.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "controller/cel/unicode.h"

namespace draco::cel {
namespace {

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

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexVal(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

class Lexer {
 public:
  explicit Lexer(std::string_view src) : src_(src) {}

  Token Next() {
    SkipSpaceAndComments();
    Token t;
    t.offset = static_cast<int32_t>(pos_);
    if (pos_ >= src_.size()) {
      t.kind = Tok::kEof;
      return t;
    }
    char c = src_[pos_];
    // String and bytes literals with optional r/b prefixes.
    if (c == '"' || c == '\'' ||
        ((c == 'r' || c == 'R' || c == 'b' || c == 'B') && StringPrefixAhead())) {
      return LexString(t);
    }
    if (IsIdentStart(c)) {
      size_t start = pos_;
      while (pos_ < src_.size() && (IsIdentStart(src_[pos_]) || IsDigit(src_[pos_]))) ++pos_;
      t.text = std::string(src_.substr(start, pos_ - start));
      if (t.text == "true") {
        t.kind = Tok::kTrue;
      } else if (t.text == "false") {
        t.kind = Tok::kFalse;
      } else if (t.text == "null") {
        t.kind = Tok::kNull;
      } else if (t.text == "in") {
        t.kind = Tok::kIn;
      } else {
        t.kind = Tok::kIdent;
      }
      return t;
    }
    if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1]))) {
      return LexNumber(t);
    }
    ++pos_;
    auto two = [&](char next, Tok yes, Tok no) {
      if (pos_ < src_.size() && src_[pos_] == next) {
        ++pos_;
        t.kind = yes;
      } else {
        t.kind = no;
      }
      return t;
    };
    switch (c) {
      case '=':
        if (pos_ < src_.size() && src_[pos_] == '=') {
          ++pos_;
          t.kind = Tok::kEq;
          return t;
        }
        break;
      case '!':
        return two('=', Tok::kNe, Tok::kNot);
      case '<':
        return two('=', Tok::kLe, Tok::kLt);
      case '>':
        return two('=', Tok::kGe, Tok::kGt);
      case '&':
        if (pos_ < src_.size() && src_[pos_] == '&') {
          ++pos_;
          t.kind = Tok::kAnd;
          return t;
        }
        break;
      case '|':
        if (pos_ < src_.size() && src_[pos_] == '|') {
          ++pos_;
          t.kind = Tok::kOr;
          return t;
        }
        break;
      case '+':
        t.kind = Tok::kPlus;
        return t;
      case '-':
        t.kind = Tok::kMinus;
        return t;
      case '*':
        t.kind = Tok::kStar;
        return t;
      case '/':
        t.kind = Tok::kSlash;
        return t;
      case '%':
        t.kind = Tok::kPercent;
        return t;
      case '?':
        t.kind = Tok::kQuestion;
        return t;
      case ':':
        t.kind = Tok::kColon;
        return t;
      case '.':
        t.kind = Tok::kDot;
        return t;
      case ',':
        t.kind = Tok::kComma;
        return t;
      case '(':
        t.kind = Tok::kLParen;
        return t;
      case ')':
        t.kind = Tok::kRParen;
        return t;
      case '[':
        t.kind = Tok::kLBracket;
        return t;
      case ']':
        t.kind = Tok::kRBracket;
        return t;
      case '{':
        t.kind = Tok::kLBrace;
        return t;
      case '}':
        t.kind = Tok::kRBrace;
        return t;
      default:
        break;
    }
    t.kind = Tok::kError;
    t.error = std::string("token recognition error at: '") + c + "'";
    return t;
  }

 private:
  void SkipSpaceAndComments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        break;
      }
    }
  }

  bool StringPrefixAhead() const {
    size_t p = pos_;
    int n = 0;
    while (p < src_.size() && n < 2 &&
           (src_[p] == 'r' || src_[p] == 'R' || src_[p] == 'b' || src_[p] == 'B')) {
      ++p;
      ++n;
    }
    if (n == 2) {
      char a = static_cast<char>(src_[pos_] | 0x20), b = static_cast<char>(src_[pos_ + 1] | 0x20);
      if (a == b) return false;
    }
    return p < src_.size() && (src_[p] == '"' || src_[p] == '\'');
  }

  Token LexNumber(Token& t) {
    size_t start = pos_;
    if (src_[pos_] == '0' && pos_ + 1 < src_.size() &&
        (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X')) {
      pos_ += 2;
      size_t digits = pos_;
      while (pos_ < src_.size() && IsHex(src_[pos_])) ++pos_;
      if (pos_ == digits) {
        t.kind = Tok::kError;
        t.error = "token recognition error at: '0x'";
        return t;
      }
      t.text = std::string(src_.substr(start, pos_ - start));
      if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
        ++pos_;
        t.kind = Tok::kUint;
      } else {
        t.kind = Tok::kInt;
      }
      return t;
    }
    bool is_double = false;
    while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && IsDigit(src_[pos_ + 1])) {
      is_double = true;
      ++pos_;
      while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && IsDigit(src_[p])) {
        is_double = true;
        pos_ = p;
        while (pos_ < src_.size() && IsDigit(src_[pos_])) ++pos_;
      }
    }
    t.text = std::string(src_.substr(start, pos_ - start));
    if (is_double) {
      t.kind = Tok::kDouble;
    } else if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
      ++pos_;
      t.kind = Tok::kUint;
    } else {
      t.kind = Tok::kInt;
    }
    return t;
  }

  Token LexString(Token& t) {
    bool raw = false, bytes = false;
    while (src_[pos_] != '"' && src_[pos_] != '\'') {
      char c = static_cast<char>(src_[pos_] | 0x20);
      if (c == 'r') raw = true;
      if (c == 'b') bytes = true;
      ++pos_;
    }
    char q = src_[pos_];
    bool triple = pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q;
    pos_ += triple ? 3 : 1;
    std::string out;
    while (true) {
      if (pos_ >= src_.size()) {
        t.kind = Tok::kError;
        t.error = "token recognition error: unterminated string";
        return t;
      }
      char c = src_[pos_];
      if (triple) {
        if (c == q && pos_ + 2 < src_.size() && src_[pos_ + 1] == q && src_[pos_ + 2] == q) {
          pos_ += 3;
          break;
        }
      } else {
        if (c == q) {
          ++pos_;
          break;
        }
        if (c == '\n' || c == '\r') {
          t.kind = Tok::kError;
          t.error = "token recognition error: newline in string";
          return t;
        }
      }
      if (c == '\\' && !raw) {
        std::string err;
        if (!Unescape(out, bytes, err)) {
          t.kind = Tok::kError;
          t.error = err;
          return t;
        }
        continue;
      }
      if (c == '\\' && raw) {
        // A raw string keeps the backslash; an escaped quote does not end the literal.
        out.push_back(c);
        ++pos_;
        if (pos_ < src_.size() && src_[pos_] == q && !triple) {
          out.push_back(q);
          ++pos_;
        }
        continue;
      }
      out.push_back(c);
      ++pos_;
    }
    t.kind = bytes ? Tok::kBytes : Tok::kString;
    t.text = std::move(out);
    if (!bytes && !IsValidUtf8(t.text)) {
      t.kind = Tok::kError;
      t.error = "invalid UTF-8 in string literal";
    }
    return t;
  }

  // Decodes one escape sequence at pos_ (which points at the backslash).
  bool Unescape(std::string& out, bool bytes, std::string& err) {
    ++pos_;
    if (pos_ >= src_.size()) {
      err = "invalid escape sequence";
      return false;
    }
    char c = src_[pos_++];
    switch (c) {
      case 'a':
        out.push_back('\a');
        return true;
      case 'b':
        out.push_back('\b');
        return true;
      case 'f':
        out.push_back('\f');
        return true;
      case 'n':
        out.push_back('\n');
        return true;
      case 'r':
        out.push_back('\r');
        return true;
      case 't':
        out.push_back('\t');
        return true;
      case 'v':
        out.push_back('\v');
        return true;
      case '\\':
      case '\'':
      case '"':
      case '`':
      case '?':
        out.push_back(c);
        return true;
      case 'x':
      case 'X': {
        if (pos_ + 2 > src_.size() || !IsHex(src_[pos_]) || !IsHex(src_[pos_ + 1])) {
          err = "invalid hex escape sequence";
          return false;
        }
        int v = HexVal(src_[pos_]) * 16 + HexVal(src_[pos_ + 1]);
        pos_ += 2;
        if (bytes) {
          out.push_back(static_cast<char>(v));
        } else {
          AppendUtf8(out, static_cast<uint32_t>(v));
        }
        return true;
      }
      case 'u':
      case 'U': {
        size_t n = c == 'u' ? 4 : 8;
        if (pos_ + n > src_.size()) {
          err = "invalid unicode escape sequence";
          return false;
        }
        uint32_t v = 0;
        for (size_t i = 0; i < n; ++i) {
          if (!IsHex(src_[pos_ + i])) {
            err = "invalid unicode escape sequence";
            return false;
          }
          v = v * 16 + static_cast<uint32_t>(HexVal(src_[pos_ + i]));
        }
        pos_ += n;
        if ((v >= 0xD800 && v < 0xE000) || v > 0x10FFFF) {
          err = "invalid unicode code point";
          return false;
        }
        AppendUtf8(out, v);
        return true;
      }
      default:
        if (c >= '0' && c <= '3' && pos_ + 2 <= src_.size() && src_[pos_] >= '0' &&
            src_[pos_] <= '7' && src_[pos_ + 1] >= '0' && src_[pos_ + 1] <= '7') {
          int v = (c - '0') * 64 + (src_[pos_] - '0') * 8 + (src_[pos_ + 1] - '0');
          pos_ += 2;
          if (bytes) {
            out.push_back(static_cast<char>(v));
          } else {
            AppendUtf8(out, static_cast<uint32_t>(v));
          }
          return true;
        }
        err = "invalid escape sequence";
        return false;
    }
  }

  std::string_view src_;
  size_t pos_ = 0;
};

const std::unordered_set<std::string>& ReservedWords() {
  static const auto* words = new std::unordered_set<std::string>{
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  return *words;
}

constexpr char kAccuVar[] = "@result";

class Parser {
 public:
  Parser(std::string_view src, Issues& issues, const ParserOptions& opts, Ast& ast)
      : lexer_(src), issues_(issues), opts_(opts), ast_(ast) {
    Advance();
  }

  std::unique_ptr<Expr> ParseAll() {
    auto e = ParseExpr();
    if (tok_.kind != Tok::kEof && !failed_) {
      Error(tok_.offset, "Syntax error: extraneous input '" + TokText() + "' expecting <EOF>");
    }
    if (failed_) return nullptr;
    return e;
  }

 private:
  // ---- infrastructure -------------------------------------------------------------------
  void Advance() {
    tok_ = lexer_.Next();
    if (tok_.kind == Tok::kError) Error(tok_.offset, "Syntax error: " + tok_.error);
  }

  void Error(int32_t offset, std::string msg) {
    if (failed_ && static_cast<int>(issues_.size()) >= opts_.max_errors) return;
    if (!failed_) issues_.Add(std::move(msg), offset);
    failed_ = true;
    // Stop the parse quickly: pretend the input ended.
    tok_.kind = Tok::kEof;
  }

  std::string TokText() const {
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

  bool Accept(Tok k) {
    if (tok_.kind == k) {
      Advance();
      return true;
    }
    return false;
  }

  bool Expect(Tok k, const char* what) {
    if (tok_.kind == k) {
      Advance();
      return true;
    }
    Error(tok_.offset,
          std::string("Syntax error: mismatched input '") + TokText() + "' expecting " + what);
    return false;
  }

  std::unique_ptr<Expr> NewExpr(ExprKind kind, int32_t offset) {
    auto e = std::make_unique<Expr>();
    e->id = ++next_id_;
    e->kind = kind;
    ast_.source_info.positions[e->id] = offset;
    return e;
  }
  std::unique_ptr<Expr> NewConst(Value v, int32_t offset) {
    auto e = NewExpr(ExprKind::kConst, offset);
    e->const_value = std::move(v);
    return e;
  }
  std::unique_ptr<Expr> NewIdent(std::string name, int32_t offset) {
    auto e = NewExpr(ExprKind::kIdent, offset);
    e->name = std::move(name);
    return e;
  }
  std::unique_ptr<Expr> NewCall(std::string fn, int32_t offset,
                                std::vector<std::unique_ptr<Expr>> args) {
    auto e = NewExpr(ExprKind::kCall, offset);
    e->name = std::move(fn);
    e->args = std::move(args);
    return e;
  }
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
    ~DepthGuard() { --p_->depth_; }
    Parser* p_;
  };

  std::unique_ptr<Expr> Dummy() { return NewConst(Value::Null(), tok_.offset); }

  // A relational or arithmetic operator node. cel-go's parser recurses once per nested binary
  // operator of these (left-recursive) grammar rules and fails past 250 levels.
  std::unique_ptr<Expr> Binary(const char* fn, int32_t off, std::unique_ptr<Expr> lhs,
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

  // ---- grammar --------------------------------------------------------------------------
  std::unique_ptr<Expr> ParseExpr() {
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

  std::unique_ptr<Expr> ParseOr() {
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

  std::unique_ptr<Expr> ParseAnd() {
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

  std::unique_ptr<Expr> ParseRelation() {
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

  std::unique_ptr<Expr> ParseAddition() {
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

  std::unique_ptr<Expr> ParseMultiplication() {
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

  std::unique_ptr<Expr> ParseUnary() {
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

  std::vector<std::unique_ptr<Expr>> ParseArgs(Tok close, const char* what) {
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

  std::unique_ptr<Expr> ParseMember() {
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

  static bool IsQualifiedName(const Expr& e) {
    if (e.kind == ExprKind::kIdent) return true;
    return e.kind == ExprKind::kSelect && !e.test_only && IsQualifiedName(*e.operand);
  }

  std::unique_ptr<Expr> ParsePrimary() {
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
        unsigned long long v = std::strtoull(text.c_str() + (hex ? 2 : 0), &end, hex ? 16 : 10);
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

  std::unique_ptr<Expr> ParseInt(bool negative, int32_t off) {
    std::string text = tok_.text;
    Advance();
    bool hex = text.size() > 2 && (text[1] == 'x' || text[1] == 'X');
    std::string digits = (negative ? "-" : "") + text.substr(hex ? 2 : 0);
    errno = 0;
    char* end = nullptr;
    long long v = std::strtoll(digits.c_str(), &end, hex ? 16 : 10);
    if (errno == ERANGE) {
      Error(off, "invalid int literal");
      return Dummy();
    }
    return NewConst(Value::Int(v), off);
  }

  std::unique_ptr<Expr> ParseDouble(bool negative, int32_t off) {
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

  // ---- macros ---------------------------------------------------------------------------
  std::unique_ptr<Expr> GlobalCall(std::string name, int32_t off,
                                   std::vector<std::unique_ptr<Expr>> args) {
    if (name == "has" && args.size() == 1) {
      if (args[0]->kind != ExprKind::kSelect) {
        Error(ast_.source_info.positions[args[0]->id], "invalid argument to has() macro");
        return Dummy();
      }
      args[0]->test_only = true;
      return std::move(args[0]);
    }
    return NewCall(std::move(name), off, std::move(args));
  }

  bool SimpleName(const std::unique_ptr<Expr>& e, std::string& out) {
    if (e->kind != ExprKind::kIdent) {
      Error(ast_.source_info.positions[e->id], "argument must be a simple name");
      return false;
    }
    out = e->name;
    if (out == kAccuVar) {
      Error(ast_.source_info.positions[e->id],
            "iteration variable overwrites accumulator variable");
      return false;
    }
    return true;
  }

  std::unique_ptr<Expr> Comprehension(int32_t off, std::unique_ptr<Expr> range, std::string v1,
                                      std::string v2, std::unique_ptr<Expr> init,
                                      std::unique_ptr<Expr> cond, std::unique_ptr<Expr> step,
                                      std::unique_ptr<Expr> result, std::string accu = kAccuVar) {
    auto c = NewExpr(ExprKind::kComprehension, off);
    c->iter_range = std::move(range);
    c->iter_var = std::move(v1);
    c->iter_var2 = std::move(v2);
    c->accu_var = std::move(accu);
    c->accu_init = std::move(init);
    c->loop_cond = std::move(cond);
    c->loop_step = std::move(step);
    c->result = std::move(result);
    return c;
  }

  std::unique_ptr<Expr> Accu(int32_t off) { return NewIdent(kAccuVar, off); }

  std::unique_ptr<Expr> MemberCall(std::unique_ptr<Expr> target, const std::string& name,
                                   int32_t off, std::vector<std::unique_ptr<Expr>> args) {
    size_t n = args.size();
    bool quant = name == "all" || name == "exists" || name == "exists_one" || name == "existsOne";
    if (quant && (n == 2 || n == 3)) {
      std::string v1, v2;
      if (!SimpleName(args[0], v1)) return Dummy();
      if (n == 3 && !SimpleName(args[1], v2)) return Dummy();
      if (n == 3 && v1 == v2) {
        Error(off, "duplicate variable name: " + v1);
        return Dummy();
      }
      if (n == 2 && name == "existsOne")
        return PlainMemberCall(std::move(target), name, off, std::move(args));
      auto pred = std::move(args[n - 1]);
      if (name == "all") {
        return Comprehension(off, std::move(target), v1, v2, NewConst(Value::Bool(true), off),
                             Call("@not_strictly_false", off, Accu(off)),
                             Call("_&&_", off, Accu(off), std::move(pred)), Accu(off));
      }
      if (name == "exists") {
        return Comprehension(off, std::move(target), v1, v2, NewConst(Value::Bool(false), off),
                             Call("@not_strictly_false", off, Call("!_", off, Accu(off))),
                             Call("_||_", off, Accu(off), std::move(pred)), Accu(off));
      }
      return Comprehension(
          off, std::move(target), v1, v2, NewConst(Value::Int(0), off),
          NewConst(Value::Bool(true), off),
          Call("_?_:_", off, std::move(pred),
               Call("_+_", off, Accu(off), NewConst(Value::Int(1), off)), Accu(off)),
          Call("_==_", off, Accu(off), NewConst(Value::Int(1), off)));
    }
    if ((name == "map" && (n == 2 || n == 3)) || (name == "filter" && n == 2)) {
      std::string v;
      if (!SimpleName(args[0], v)) return Dummy();
      std::unique_ptr<Expr> filter;
      std::unique_ptr<Expr> fn;
      if (name == "filter") {
        filter = std::move(args[1]);
        fn = NewIdent(v, off);
      } else if (n == 3) {
        filter = std::move(args[1]);
        fn = std::move(args[2]);
      } else {
        fn = std::move(args[1]);
      }
      auto list = NewExpr(ExprKind::kList, off);
      list->args.push_back(std::move(fn));
      std::unique_ptr<Expr> step = Call("_+_", off, Accu(off), std::move(list));
      if (filter) step = Call("_?_:_", off, std::move(filter), std::move(step), Accu(off));
      return Comprehension(off, std::move(target), v, "", NewExpr(ExprKind::kList, off),
                           NewConst(Value::Bool(true), off), std::move(step), Accu(off));
    }
    if ((name == "transformList" || name == "transformMap" || name == "transformMapEntry") &&
        (n == 3 || n == 4)) {
      std::string v1, v2;
      if (!SimpleName(args[0], v1) || !SimpleName(args[1], v2)) return Dummy();
      if (v1 == v2) {
        Error(off, "duplicate variable name: " + v1);
        return Dummy();
      }
      std::unique_ptr<Expr> filter = n == 4 ? std::move(args[2]) : nullptr;
      std::unique_ptr<Expr> fn = std::move(args[n - 1]);
      std::unique_ptr<Expr> step;
      std::unique_ptr<Expr> init;
      if (name == "transformList") {
        auto list = NewExpr(ExprKind::kList, off);
        list->args.push_back(std::move(fn));
        step = Call("_+_", off, Accu(off), std::move(list));
        init = NewExpr(ExprKind::kList, off);
      } else if (name == "transformMap") {
        step = Call("cel.@mapInsert", off, Accu(off), NewIdent(v1, off), std::move(fn));
        init = NewExpr(ExprKind::kMap, off);
      } else {
        step = Call("cel.@mapInsert", off, Accu(off), std::move(fn));
        init = NewExpr(ExprKind::kMap, off);
      }
      if (filter) step = Call("_?_:_", off, std::move(filter), std::move(step), Accu(off));
      return Comprehension(off, std::move(target), v1, v2, std::move(init),
                           NewConst(Value::Bool(true), off), std::move(step), Accu(off));
    }
    if (name == "bind" && n == 3 && target->kind == ExprKind::kIdent && target->name == "cel") {
      std::string v;
      if (args[0]->kind != ExprKind::kIdent) {
        Error(ast_.source_info.positions[args[0]->id],
              "cel.bind() variable names must be simple identifiers");
        return Dummy();
      }
      v = args[0]->name;
      return Comprehension(off, NewExpr(ExprKind::kList, off), "#unused", "", std::move(args[1]),
                           NewConst(Value::Bool(false), off), NewIdent(v, off), std::move(args[2]),
                           v);
    }
    if (name == "sortBy" && n == 2) {
      // ext.Lists v3: cel.bind(@__sortBy_input__, target,
      //   @__sortBy_input__.@sortByAssociatedKeys(@__sortBy_input__.map(v, key)))
      if (!(target->kind == ExprKind::kList || target->kind == ExprKind::kSelect ||
            target->kind == ExprKind::kIdent || target->kind == ExprKind::kComprehension ||
            target->kind == ExprKind::kCall)) {
        Error(ast_.source_info.positions[target->id],
              "sortBy can only be applied to a list, identifier, comprehension, call or select "
              "expression");
        return Dummy();
      }
      const std::string var = "@__sortBy_input__";
      auto mapped = MemberCall(NewIdent(var, off), "map", off, std::move(args));
      auto sorted = PlainMemberCall(NewIdent(var, off), "@sortByAssociatedKeys", off, {});
      sorted->args.push_back(std::move(mapped));
      return Comprehension(off, NewExpr(ExprKind::kList, off), "#unused", "", std::move(target),
                           NewConst(Value::Bool(false), off), NewIdent(var, off), std::move(sorted),
                           var);
    }
    if ((name == "optMap" || name == "optFlatMap") && n == 2) {
      std::string v;
      if (args[0]->kind != ExprKind::kIdent) {
        Error(ast_.source_info.positions[args[0]->id],
              name + "() variable name must be a simple identifier");
        return Dummy();
      }
      v = args[0]->name;
      // target.hasValue() ? <bind v = target.value() in fn> : optional.none()
      int32_t t_off = ast_.source_info.positions[target->id];
      auto copy = CloneExpr(*target);
      auto has_value = NewExpr(ExprKind::kCall, t_off);
      has_value->name = "hasValue";
      has_value->operand = std::move(target);
      auto value = NewExpr(ExprKind::kCall, t_off);
      value->name = "value";
      value->operand = std::move(copy);
      auto bound =
          Comprehension(off, NewExpr(ExprKind::kList, off), "#unused", "", std::move(value),
                        NewConst(Value::Bool(false), off), NewIdent(v, off), std::move(args[1]), v);
      if (name == "optMap") bound = Call("optional.of", off, std::move(bound));
      return Call("_?_:_", off, std::move(has_value), std::move(bound), Call("optional.none", off));
    }
    return PlainMemberCall(std::move(target), name, off, std::move(args));
  }

  std::unique_ptr<Expr> PlainMemberCall(std::unique_ptr<Expr> target, const std::string& name,
                                        int32_t off, std::vector<std::unique_ptr<Expr>> args) {
    auto call = NewCall(name, off, std::move(args));
    call->operand = std::move(target);
    return call;
  }

  std::unique_ptr<Expr> CloneExpr(const Expr& e) {
    auto c = NewExpr(e.kind, ast_.source_info.positions[e.id]);
    c->const_value = e.const_value;
    c->name = e.name;
    c->test_only = e.test_only;
    c->optional_indices = e.optional_indices;
    c->iter_var = e.iter_var;
    c->iter_var2 = e.iter_var2;
    c->accu_var = e.accu_var;
    if (e.operand) c->operand = CloneExpr(*e.operand);
    for (const auto& a : e.args) c->args.push_back(CloneExpr(*a));
    for (const auto& a : e.values) c->values.push_back(CloneExpr(*a));
    if (e.iter_range) c->iter_range = CloneExpr(*e.iter_range);
    if (e.accu_init) c->accu_init = CloneExpr(*e.accu_init);
    if (e.loop_cond) c->loop_cond = CloneExpr(*e.loop_cond);
    if (e.loop_step) c->loop_step = CloneExpr(*e.loop_step);
    if (e.result) c->result = CloneExpr(*e.result);
    return c;
  }

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

}  // namespace

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

std::pair<int, int> SourceInfo::LineColumn(const std::string& source, int32_t offset) const {
  int line = 1;
  int32_t line_start = 0;
  for (int32_t lo : line_offsets) {
    if (lo > offset) break;
    ++line;
    line_start = lo;
  }
  int col = 1;
  for (int32_t i = line_start; i < offset && static_cast<size_t>(i) < source.size(); ++i) {
    if ((static_cast<unsigned char>(source[static_cast<size_t>(i)]) & 0xC0) != 0x80) ++col;
  }
  return {line, col};
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
  Parser p(source, issues, options, *ast);
  ast->root = p.ParseAll();
  if (!ast->root) return nullptr;
  return ast;
}

namespace {

void DebugInto(const Expr& e, std::string& out) {
  auto tag = [&](const char* kind) { out += "^#" + std::to_string(e.id) + ":" + kind + "#"; };
  switch (e.kind) {
    case ExprKind::kConst:
      out += e.const_value.DebugString();
      tag(e.const_value.kind() == Kind::kInt      ? "int64"
          : e.const_value.kind() == Kind::kUint   ? "uint64"
          : e.const_value.kind() == Kind::kDouble ? "double"
          : e.const_value.kind() == Kind::kString ? "string"
          : e.const_value.kind() == Kind::kBytes  ? "bytes"
          : e.const_value.kind() == Kind::kBool   ? "bool"
                                                  : "null");
      return;
    case ExprKind::kIdent:
      out += e.name;
      tag("ident");
      return;
    case ExprKind::kSelect:
      DebugInto(*e.operand, out);
      out += "." + e.name;
      if (e.test_only) out += "~test-only~";
      tag("select");
      return;
    case ExprKind::kCall:
      if (e.operand) {
        DebugInto(*e.operand, out);
        out += ".";
      }
      out += e.name + "(";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        DebugInto(*e.args[i], out);
      }
      out += ")";
      tag("call");
      return;
    case ExprKind::kList:
      out += "[";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        DebugInto(*e.args[i], out);
      }
      out += "]";
      tag("list");
      return;
    case ExprKind::kMap:
      out += "{";
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        DebugInto(*e.args[i], out);
        out += ": ";
        DebugInto(*e.values[i], out);
      }
      out += "}";
      tag("map");
      return;
    case ExprKind::kComprehension:
      out += "__comprehension__(";
      out += e.iter_var + (e.iter_var2.empty() ? "" : "," + e.iter_var2) + ", ";
      DebugInto(*e.iter_range, out);
      out += ", " + e.accu_var + ", ";
      DebugInto(*e.accu_init, out);
      out += ", ";
      DebugInto(*e.loop_cond, out);
      out += ", ";
      DebugInto(*e.loop_step, out);
      out += ", ";
      DebugInto(*e.result, out);
      out += ")";
      tag("comprehension");
      return;
  }
}

}  // namespace

std::string AstDebugString(const Expr& expr) {
  std::string out;
  DebugInto(expr, out);
  return out;
}

}  // namespace draco::cel
