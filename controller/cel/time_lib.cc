#include "controller/cel/time_lib.h"

#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <limits>

namespace draco::cel {
namespace {

constexpr const char* kDurationType = "google.protobuf.Duration";
constexpr const char* kTimestampType = "google.protobuf.Timestamp";
constexpr int64_t kNanos = 1000000000;
// Timestamp range: 0001-01-01T00:00:00Z .. 9999-12-31T23:59:59.999999999Z (unix seconds).
constexpr int64_t kMinUnix = -62135596800;
constexpr int64_t kMaxUnix = 253402300799;

class DurationValue final : public OpaqueValue {
 public:
  explicit DurationValue(int64_t ns) : ns_(ns) {}
  std::string_view TypeName() const override { return kDurationType; }
  std::optional<bool> Equals(const OpaqueValue& o) const override {
    auto* d = dynamic_cast<const DurationValue*>(&o);
    if (!d) return std::nullopt;
    return ns_ == d->ns_;
  }
  std::optional<int> Compare(const OpaqueValue& o) const override {
    auto* d = dynamic_cast<const DurationValue*>(&o);
    if (!d) return std::nullopt;
    return ns_ < d->ns_ ? -1 : (ns_ > d->ns_ ? 1 : 0);
  }
  std::string DebugString() const override;
  int64_t ns() const { return ns_; }

 private:
  int64_t ns_;
};

class TimestampValue final : public OpaqueValue {
 public:
  TimestampValue(int64_t sec, int32_t nanos) : sec_(sec), nanos_(nanos) {}
  std::string_view TypeName() const override { return kTimestampType; }
  std::optional<bool> Equals(const OpaqueValue& o) const override {
    auto* t = dynamic_cast<const TimestampValue*>(&o);
    if (!t) return std::nullopt;
    return sec_ == t->sec_ && nanos_ == t->nanos_;
  }
  std::optional<int> Compare(const OpaqueValue& o) const override {
    auto* t = dynamic_cast<const TimestampValue*>(&o);
    if (!t) return std::nullopt;
    if (sec_ != t->sec_) return sec_ < t->sec_ ? -1 : 1;
    return nanos_ < t->nanos_ ? -1 : (nanos_ > t->nanos_ ? 1 : 0);
  }
  std::string DebugString() const override;
  int64_t sec() const { return sec_; }
  int32_t nanos() const { return nanos_; }

 private:
  int64_t sec_;
  int32_t nanos_;
};

Value Dur(int64_t ns) { return Value::Opaque(std::make_shared<const DurationValue>(ns)); }
Value Ts(int64_t sec, int32_t nanos) {
  return Value::Opaque(std::make_shared<const TimestampValue>(sec, nanos));
}
int64_t AsDur(const Value& v) { return static_cast<const DurationValue&>(v.opaque()).ns(); }
const TimestampValue& AsTs(const Value& v) {
  return static_cast<const TimestampValue&>(v.opaque());
}

// Go time.ParseDuration.
std::optional<int64_t> ParseGoDuration(const std::string& s0) {
  std::string s = s0;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s = s.substr(1);
  }
  if (s == "0") return 0;
  if (s.empty()) return std::nullopt;
  uint64_t total = 0;
  size_t i = 0;
  while (i < s.size()) {
    if (!(s[i] == '.' || std::isdigit(static_cast<unsigned char>(s[i])))) return std::nullopt;
    uint64_t v = 0;
    size_t start = i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (v > (1ULL << 63) / 10) return std::nullopt;
      v = v * 10 + static_cast<uint64_t>(s[i] - '0');
      if (v > (1ULL << 63)) return std::nullopt;
      ++i;
    }
    bool pre = i != start;
    uint64_t frac = 0;
    double scale = 1;
    bool post = false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      size_t fs = i;
      bool overflow = false;
      while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
        if (!overflow) {
          if (frac > (1ULL << 63) / 10) {
            overflow = true;
          } else {
            frac = frac * 10 + static_cast<uint64_t>(s[i] - '0');
            scale *= 10;
          }
        }
        ++i;
      }
      post = i != fs;
    }
    if (!pre && !post) return std::nullopt;
    size_t us = i;
    while (i < s.size() && !(s[i] == '.' || std::isdigit(static_cast<unsigned char>(s[i])))) ++i;
    std::string unit = s.substr(us, i - us);
    uint64_t mult;
    if (unit == "ns") {
      mult = 1;
    } else if (unit == "us" || unit == "\xc2\xb5s" || unit == "\xce\xbcs") {
      mult = 1000;
    } else if (unit == "ms") {
      mult = 1000000;
    } else if (unit == "s") {
      mult = 1000000000ULL;
    } else if (unit == "m") {
      mult = 60ULL * 1000000000ULL;
    } else if (unit == "h") {
      mult = 3600ULL * 1000000000ULL;
    } else {
      return std::nullopt;
    }
    if (v > (1ULL << 63) / mult) return std::nullopt;
    v *= mult;
    if (frac > 0) {
      v += static_cast<uint64_t>(static_cast<double>(frac) * (static_cast<double>(mult) / scale));
      if (v > (1ULL << 63)) return std::nullopt;
    }
    total += v;
    if (total > (1ULL << 63)) return std::nullopt;
  }
  if (neg) return -static_cast<int64_t>(total - 1) - 1;
  if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    return std::nullopt;
  }
  return static_cast<int64_t>(total);
}

int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool Digits(const std::string& s, size_t at, size_t n, int& out) {
  if (at + n > s.size()) return false;
  out = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

// Go time.Parse(time.RFC3339, s).
std::optional<std::pair<int64_t, int32_t>> ParseRfc3339(const std::string& s) {
  int y, mo, d, h, mi, se;
  if (!Digits(s, 0, 4, y) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2, mo) || s[7] != '-' ||
      !Digits(s, 8, 2, d) || (s[10] != 'T' && s[10] != 't') || !Digits(s, 11, 2, h) ||
      s[13] != ':' || !Digits(s, 14, 2, mi) || s[16] != ':' || !Digits(s, 17, 2, se)) {
    return std::nullopt;
  }
  size_t i = 19;
  int64_t nanos = 0;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    size_t start = i;
    int64_t scale = kNanos;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      if (i - start < 9) {
        scale /= 10;
        nanos += (s[i] - '0') * scale;
      }
      ++i;
    }
    if (i == start) return std::nullopt;
  }
  int64_t offset = 0;
  if (i < s.size() && (s[i] == 'Z' || s[i] == 'z')) {
    ++i;
  } else if (i < s.size() && (s[i] == '+' || s[i] == '-')) {
    int oh, om;
    if (!Digits(s, i + 1, 2, oh) || i + 3 >= s.size() || s[i + 3] != ':' ||
        !Digits(s, i + 4, 2, om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = (int64_t{oh} * 3600 + int64_t{om} * 60) * (s[i] == '-' ? -1 : 1);
    i += 6;
  } else {
    return std::nullopt;
  }
  if (i != s.size()) return std::nullopt;
  static constexpr std::array<int, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (mo < 1 || mo > 12 || d < 1 || d > kDays[mo - 1] || h > 23 || mi > 59 || se > 59) {
    return std::nullopt;
  }
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (mo == 2 && d == 29 && !leap) return std::nullopt;
  int64_t days = DaysFromCivil(y, static_cast<unsigned>(mo), static_cast<unsigned>(d));
  int64_t sec = days * 86400 + int64_t{h} * 3600 + int64_t{mi} * 60 + se - offset;
  return std::make_pair(sec, static_cast<int32_t>(nanos));
}

std::string FormatTimestamp(int64_t sec, int32_t nanos) {
  int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
  int64_t rem = sec - days * 86400;
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(),
                "%04" PRId64 "-%02u-%02uT%02" PRId64 ":%02" PRId64 ":%02" PRId64, y, m, d,
                rem / 3600, rem % 3600 / 60, rem % 60);
  std::string out = buf.data();
  if (nanos != 0) {
    std::array<char, 16> f{};
    std::snprintf(f.data(), f.size(), ".%09d", nanos);
    std::string fs = f.data();
    while (fs.back() == '0') fs.pop_back();
    out += fs;
  }
  return out + "Z";
}

std::string FormatDuration(int64_t ns) {
  // cel-go: strconv.FormatFloat(seconds, 'f', -1, 64) + "s".
  long double secs = static_cast<long double>(ns) / kNanos;
  std::array<char, 64> buf{};
  std::snprintf(buf.data(), buf.size(), "%.9Lf", secs);
  std::string s = buf.data();
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s + "s";
}

}  // namespace

std::string DurationValue::DebugString() const { return "duration(" + FormatDuration(ns_) + ")"; }
std::string TimestampValue::DebugString() const {
  return "timestamp(" + FormatTimestamp(sec_, nanos_) + ")";
}

std::optional<std::string> DurationLiteralError(const std::string& s) {
  if (ParseGoDuration(s)) return std::nullopt;
  return "time: invalid duration \"" + s + "\"";
}

std::optional<std::string> TimestampLiteralError(const std::string& s) {
  auto t = ParseRfc3339(s);
  if (t && t->first >= kMinUnix && t->first <= kMaxUnix) return std::nullopt;
  return "parsing time \"" + s + R"(" as "2006-01-02T15:04:05Z07:00": cannot parse)";
}

namespace {

Value TsChecked(int64_t sec, int64_t nanos) {
  if (nanos >= kNanos || nanos < 0) {
    int64_t carry = nanos >= 0 ? nanos / kNanos : -((-nanos + kNanos - 1) / kNanos);
    sec += carry;
    nanos -= carry * kNanos;
  }
  if (sec < kMinUnix || sec > kMaxUnix) return Value::Error("timestamp overflow");
  return Ts(sec, static_cast<int32_t>(nanos));
}

Value DurationFromString(const Value* a, EvalContext&) {
  auto d = ParseGoDuration(a[0].str());
  if (!d) return Value::Error("time: invalid duration \"" + a[0].str() + "\"");
  return Dur(*d);
}
Value TimestampFromString(const Value* a, EvalContext&) {
  auto t = ParseRfc3339(a[0].str());
  if (!t) {
    return Value::Error("parsing time \"" + a[0].str() +
                        R"(" as "2006-01-02T15:04:05Z07:00": cannot parse)");
  }
  return TsChecked(t->first, t->second);
}
Value TimestampFromInt(const Value* a, EvalContext&) { return TsChecked(a[0].int_value(), 0); }
Value Identity(const Value* a, EvalContext&) { return a[0]; }
Value TsToInt(const Value* a, EvalContext&) { return Value::Int(AsTs(a[0]).sec()); }
Value TsToString(const Value* a, EvalContext&) {
  return Value::String(FormatTimestamp(AsTs(a[0]).sec(), AsTs(a[0]).nanos()));
}
Value DurToString(const Value* a, EvalContext&) {
  return Value::String(FormatDuration(AsDur(a[0])));
}
Value DurToInt(const Value* a, EvalContext&) { return Value::Int(AsDur(a[0]) / kNanos); }

Value AddDurDur(const Value* a, EvalContext&) {
  int64_t r;
  if (__builtin_add_overflow(AsDur(a[0]), AsDur(a[1]), &r)) return Value::Error("integer overflow");
  return Dur(r);
}
Value SubDurDur(const Value* a, EvalContext&) {
  int64_t r;
  if (__builtin_sub_overflow(AsDur(a[0]), AsDur(a[1]), &r)) return Value::Error("integer overflow");
  return Dur(r);
}
Value AddTsDur(const Value* a, EvalContext&) {
  const TimestampValue& t = AsTs(a[0]);
  int64_t d = AsDur(a[1]);
  return TsChecked(t.sec() + d / kNanos, t.nanos() + d % kNanos);
}
Value AddDurTs(const Value* a, EvalContext& ctx) {
  std::array<Value, 2> swapped{a[1], a[0]};
  return AddTsDur(swapped.data(), ctx);
}
Value SubTsDur(const Value* a, EvalContext&) {
  const TimestampValue& t = AsTs(a[0]);
  int64_t d = AsDur(a[1]);
  if (d == std::numeric_limits<int64_t>::min()) return Value::Error("integer overflow");
  return TsChecked(t.sec() - d / kNanos, t.nanos() - d % kNanos);
}
Value SubTsTs(const Value* a, EvalContext&) {
  const TimestampValue &x = AsTs(a[0]), &y = AsTs(a[1]);
  int64_t secs = x.sec() - y.sec();
  int64_t r;
  if (__builtin_mul_overflow(secs, kNanos, &r) ||
      __builtin_add_overflow(r, static_cast<int64_t>(x.nanos() - y.nanos()), &r)) {
    return Value::Error("integer overflow");
  }
  return Dur(r);
}

// Offset in seconds for a time zone argument ("UTC", "Z", "+hh:mm", "-hh:mm"); nullopt if
// unsupported.
std::optional<int64_t> ZoneOffset(const std::string& tz) {
  if (tz == "UTC" || tz == "Z" || tz.empty()) return 0;
  if ((tz[0] == '+' || tz[0] == '-') && tz.size() == 6 && tz[3] == ':') {
    int h, m;
    if (!Digits(tz, 1, 2, h) || !Digits(tz, 4, 2, m)) return std::nullopt;
    return (h * 3600 + m * 60) * (tz[0] == '-' ? -1 : 1);
  }
  return std::nullopt;
}

enum class Field { kYear, kMonth, kDate, kDayOfMonth, kDayOfWeek, kDayOfYear, kH, kM, kS, kMs };

Value TsField(const Value& tsv, Field f, const std::string& tz) {
  auto off = ZoneOffset(tz);
  if (!off) return Value::Error("unknown time zone " + tz);
  const TimestampValue& t = AsTs(tsv);
  int64_t sec = t.sec() + *off;
  int64_t days = sec >= 0 ? sec / 86400 : -((-sec + 86399) / 86400);
  int64_t rem = sec - days * 86400;
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  switch (f) {
    case Field::kYear:
      return Value::Int(y);
    case Field::kMonth:
      return Value::Int(static_cast<int64_t>(m) - 1);
    case Field::kDate:
      return Value::Int(d);
    case Field::kDayOfMonth:
      return Value::Int(static_cast<int64_t>(d) - 1);
    case Field::kDayOfWeek: {
      int64_t w = (days % 7 + 11) % 7;  // 1970-01-01 was a Thursday (4)
      return Value::Int(w);
    }
    case Field::kDayOfYear:
      return Value::Int(days - DaysFromCivil(y, 1, 1));
    case Field::kH:
      return Value::Int(rem / 3600);
    case Field::kM:
      return Value::Int(rem % 3600 / 60);
    case Field::kS:
      return Value::Int(rem % 60);
    case Field::kMs:
      return Value::Int(t.nanos() / 1000000);
  }
  return Value::Error("?");
}

template <Field F>
Value TsGet(const Value* a, EvalContext&) {
  return TsField(a[0], F, "");
}
template <Field F>
Value TsGetTz(const Value* a, EvalContext&) {
  return TsField(a[0], F, a[1].str());
}
Value DurHours(const Value* a, EvalContext&) { return Value::Int(AsDur(a[0]) / (3600 * kNanos)); }
Value DurMinutes(const Value* a, EvalContext&) { return Value::Int(AsDur(a[0]) / (60 * kNanos)); }
Value DurSeconds(const Value* a, EvalContext&) { return Value::Int(AsDur(a[0]) / kNanos); }
Value DurMillis(const Value* a, EvalContext&) { return Value::Int(AsDur(a[0]) / 1000000); }

template <int kOp>
Value Cmp(const Value* a, EvalContext&) {
  auto c = a[0].opaque().Compare(a[1].opaque());
  if (!c) return Value::Error("no such overload");
  switch (kOp) {
    case 0:
      return Value::Bool(*c < 0);
    case 1:
      return Value::Bool(*c <= 0);
    case 2:
      return Value::Bool(*c > 0);
    default:
      return Value::Bool(*c >= 0);
  }
}

void Add(Env& env, const std::string& fn, const std::string& id, bool member,
         std::vector<Type> args, Type result, FunctionImpl impl) {
  Overload o;
  o.id = id;
  o.member = member;
  o.args = std::move(args);
  o.result = std::move(result);
  o.impl = impl;
  env.AddOverload(fn, std::move(o));
}

}  // namespace

void AddTimeLibrary(Env& env) {
  const Type D = Type::Opaque(kDurationType), T = Type::Opaque(kTimestampType), S = Type::String(),
             I = Type::Int(), B = Type::Bool();
  Add(env, "duration", "string_to_duration", false, {S}, D, DurationFromString);
  Add(env, "duration", "duration_to_duration", false, {D}, D, Identity);
  Add(env, "timestamp", "string_to_timestamp", false, {S}, T, TimestampFromString);
  Add(env, "timestamp", "int64_to_timestamp", false, {I}, T, TimestampFromInt);
  Add(env, "timestamp", "timestamp_to_timestamp", false, {T}, T, Identity);
  Add(env, "int", "timestamp_to_int64", false, {T}, I, TsToInt);
  Add(env, "int", "duration_to_int64", false, {D}, I, DurToInt);
  Add(env, "string", "timestamp_to_string", false, {T}, S, TsToString);
  Add(env, "string", "duration_to_string", false, {D}, S, DurToString);
  Add(env, "_+_", "add_timestamp_duration", false, {T, D}, T, AddTsDur);
  Add(env, "_+_", "add_duration_timestamp", false, {D, T}, T, AddDurTs);
  Add(env, "_+_", "add_duration_duration", false, {D, D}, D, AddDurDur);
  Add(env, "_-_", "subtract_timestamp_timestamp", false, {T, T}, D, SubTsTs);
  Add(env, "_-_", "subtract_timestamp_duration", false, {T, D}, T, SubTsDur);
  Add(env, "_-_", "subtract_duration_duration", false, {D, D}, D, SubDurDur);
  struct Ord {
    const char* fn;
    FunctionImpl impl;
  };
  for (const Ord& o :
       {Ord{"_<_", Cmp<0>}, Ord{"_<=_", Cmp<1>}, Ord{"_>_", Cmp<2>}, Ord{"_>=_", Cmp<3>}}) {
    Add(env, o.fn, "timestamp", false, {T, T}, B, o.impl);
    Add(env, o.fn, "duration", false, {D, D}, B, o.impl);
  }
  struct Getter {
    const char* fn;
    FunctionImpl plain;
    FunctionImpl tz;
  };
  for (const Getter& g :
       {Getter{"getFullYear", TsGet<Field::kYear>, TsGetTz<Field::kYear>},
        Getter{"getMonth", TsGet<Field::kMonth>, TsGetTz<Field::kMonth>},
        Getter{"getDate", TsGet<Field::kDate>, TsGetTz<Field::kDate>},
        Getter{"getDayOfMonth", TsGet<Field::kDayOfMonth>, TsGetTz<Field::kDayOfMonth>},
        Getter{"getDayOfWeek", TsGet<Field::kDayOfWeek>, TsGetTz<Field::kDayOfWeek>},
        Getter{"getDayOfYear", TsGet<Field::kDayOfYear>, TsGetTz<Field::kDayOfYear>},
        Getter{"getHours", TsGet<Field::kH>, TsGetTz<Field::kH>},
        Getter{"getMinutes", TsGet<Field::kM>, TsGetTz<Field::kM>},
        Getter{"getSeconds", TsGet<Field::kS>, TsGetTz<Field::kS>},
        Getter{"getMilliseconds", TsGet<Field::kMs>, TsGetTz<Field::kMs>}}) {
    Add(env, g.fn, std::string("timestamp_to_") + g.fn, true, {T}, I, g.plain);
    Add(env, g.fn, std::string("timestamp_to_") + g.fn + "_with_tz", true, {T, S}, I, g.tz);
  }
  Add(env, "getHours", "duration_to_hours", true, {D}, I, DurHours);
  Add(env, "getMinutes", "duration_to_minutes", true, {D}, I, DurMinutes);
  Add(env, "getSeconds", "duration_to_seconds", true, {D}, I, DurSeconds);
  Add(env, "getMilliseconds", "duration_to_milliseconds", true, {D}, I, DurMillis);
}

}  // namespace draco::cel
