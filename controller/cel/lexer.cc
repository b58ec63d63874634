// The CEL lexer: tokens, numeric and string literals with their escape sequences.
#include <string>
#include <string_view>

#include "controller/cel/parser_internal.h"
#include "controller/cel/unicode.h"

namespace draco::cel::parser_internal {
namespace {

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }
int HexVal(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

}  // namespace

Token Lexer::Next() {
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
  if (IsIdentStart(c)) return LexIdent(t);
  if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1]))) {
    return LexNumber(t);
  }
  return LexOperator(t, c);
}

Token Lexer::LexIdent(Token& t) {
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

Token Lexer::LexOperator(Token& t, char c) {
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

void Lexer::SkipSpaceAndComments() {
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

bool Lexer::StringPrefixAhead() const {
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

Token Lexer::LexNumber(Token& t) {
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

Token Lexer::LexString(Token& t) {
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

bool Lexer::Unescape(std::string& out, bool bytes, std::string& err) {
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

}  // namespace draco::cel::parser_internal
