#include "tests/differential/cel/cel_harness.h"

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "base/status_macros.h"
#include "controller/api/quantity.h"

namespace draco::celdiff {

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kCompileError:
      return "compileError";
    case Outcome::kEvalError:
      return "evalError";
    case Outcome::kTrue:
      return "true";
    case Outcome::kFalse:
      return "false";
    case Outcome::kInputError:
      return "inputError";
  }
  return "?";
}

namespace {

bool IsArray(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && it->value.IsArray();
}
bool Has(const rapidjson::Value& obj, const char* name) {
  auto it = obj.FindMember(name);
  return it != obj.MemberEnd() && !it->value.IsNull();
}

Status AddAttribute(celenv::DeviceDataBuilder& b, std::string_view name,
                    const rapidjson::Value& a) {
  if (!a.IsObject()) return InvalidArgumentError("attribute is not an object");
  // Same precedence as upstream's getAttributeValue.
  if (IsArray(a, "ints")) {
    std::vector<int64_t> v;
    for (const auto& e : a["ints"].GetArray()) {
      if (!e.IsInt64()) return InvalidArgumentError("ints: not an int64");
      v.push_back(e.GetInt64());
    }
    b.IntList(name, v);
  } else if (IsArray(a, "bools")) {
    std::vector<bool> v;
    for (const auto& e : a["bools"].GetArray()) {
      if (!e.IsBool()) return InvalidArgumentError("bools: not a bool");
      v.push_back(e.GetBool());
    }
    b.BoolList(name, v);
  } else if (IsArray(a, "strings")) {
    std::vector<std::string> v;
    for (const auto& e : a["strings"].GetArray()) {
      if (!e.IsString()) return InvalidArgumentError("strings: not a string");
      v.emplace_back(e.GetString(), e.GetStringLength());
    }
    b.StringList(name, v);
  } else if (IsArray(a, "versions")) {
    std::vector<std::string> v;
    for (const auto& e : a["versions"].GetArray()) {
      if (!e.IsString()) return InvalidArgumentError("versions: not a string");
      v.emplace_back(e.GetString(), e.GetStringLength());
    }
    b.VersionList(name, v);
  } else if (Has(a, "int")) {
    if (!a["int"].IsInt64()) return InvalidArgumentError("int: not an int64");
    b.Int(name, a["int"].GetInt64());
  } else if (Has(a, "bool")) {
    if (!a["bool"].IsBool()) return InvalidArgumentError("bool: not a bool");
    b.Bool(name, a["bool"].GetBool());
  } else if (Has(a, "string")) {
    if (!a["string"].IsString()) return InvalidArgumentError("string: not a string");
    b.String(name, std::string(a["string"].GetString(), a["string"].GetStringLength()));
  } else if (Has(a, "version")) {
    if (!a["version"].IsString()) return InvalidArgumentError("version: not a string");
    b.Version(name, std::string_view(a["version"].GetString(), a["version"].GetStringLength()));
  } else {
    b.Unsupported(name);
  }
  return OkStatus();
}

}  // namespace

StatusOr<std::shared_ptr<const celenv::DeviceData>> DeviceFromJson(const rapidjson::Value& d) {
  if (!d.IsObject()) return InvalidArgumentError("device is not an object");
  std::string driver;
  if (Has(d, "driver")) {
    if (!d["driver"].IsString()) return InvalidArgumentError("driver: not a string");
    driver.assign(d["driver"].GetString(), d["driver"].GetStringLength());
  }
  celenv::DeviceDataBuilder b(driver);
  if (Has(d, "attributes")) {
    if (!d["attributes"].IsObject()) return InvalidArgumentError("attributes: not an object");
    for (const auto& m : d["attributes"].GetObject()) {
      DRACO_RETURN_IF_ERROR(
          AddAttribute(b, std::string_view(m.name.GetString(), m.name.GetStringLength()), m.value));
    }
  }
  if (Has(d, "capacity")) {
    if (!d["capacity"].IsObject()) return InvalidArgumentError("capacity: not an object");
    for (const auto& m : d["capacity"].GetObject()) {
      if (!m.value.IsObject() || !m.value.HasMember("value") || !m.value["value"].IsString()) {
        return InvalidArgumentError("capacity: value is not a quantity string");
      }
      auto q = api::Quantity::Parse(m.value["value"].GetString());
      if (!q.ok()) return q.status();
      b.Capacity(std::string_view(m.name.GetString(), m.name.GetStringLength()), *q);
    }
  }
  if (Has(d, "allowMultipleAllocations")) {
    if (!d["allowMultipleAllocations"].IsBool()) {
      return InvalidArgumentError("allowMultipleAllocations: not a bool");
    }
    b.AllowMultipleAllocations(d["allowMultipleAllocations"].GetBool());
  }
  return b.Build();
}

std::string ClassifyEvalError(std::string_view m) {
  auto has = [&](std::string_view s) { return m.find(s) != std::string_view::npos; };
  if (has("operation cancelled: actual cost limit exceeded")) return "costLimit";
  if (has("no such key")) return "noSuchKey";
  if (has("no such overload") || has("no matching overload")) return "noSuchOverload";
  if (has("division by zero") || has("modulus by zero")) return "divideByZero";
  if (has("overflow")) return "overflow";
  if (has("could not be converted to bool")) return "notBool";
  if (m.rfind("attribute ", 0) == 0) return "attribute";
  if (has("index out of range") || has("index '")) return "indexOutOfRange";
  return "invalidArgument";
}

CelOutput RunDraco(const rapidjson::Value& input) {
  CelOutput out;
  if (!input.IsObject()) {
    out.message = "input is not an object";
    return out;
  }
  if (input.HasMember("id") && input["id"].IsString()) out.id = input["id"].GetString();
  if (!input.HasMember("expr") || !input["expr"].IsString() || !input.HasMember("device")) {
    out.message = "missing expr or device";
    return out;
  }
  auto device = DeviceFromJson(input["device"]);
  if (!device.ok()) {
    out.message = device.status().message();
    return out;
  }
  celenv::SelectorOptions opts;
  opts.enforce_length_limit = false;  // the scheduler does not re-validate stored expressions
  auto sel = celenv::CompileSelector(
      std::string_view(input["expr"].GetString(), input["expr"].GetStringLength()), opts);
  if (!sel.ok()) {
    out.outcome = Outcome::kCompileError;
    out.message = sel.status().message();
    return out;
  }
  celenv::MatchResult r = (*sel)->Evaluate(**device);
  out.cost = r.cost;
  if (!r.matched.ok()) {
    out.outcome = Outcome::kEvalError;
    out.message = r.matched.status().message();
    out.error_class = ClassifyEvalError(out.message);
    return out;
  }
  out.outcome = *r.matched ? Outcome::kTrue : Outcome::kFalse;
  return out;
}

CelOutput ParseOracleOutput(const rapidjson::Value& o) {
  CelOutput out;
  if (!o.IsObject()) {
    out.message = "output is not an object";
    return out;
  }
  if (o.HasMember("id") && o["id"].IsString()) out.id = o["id"].GetString();
  if (Has(o, "compileError")) {
    out.outcome = Outcome::kCompileError;
    out.message = o["compileError"].GetString();
  } else if (Has(o, "evalError")) {
    out.outcome = Outcome::kEvalError;
    out.message = o["evalError"].GetString();
    if (Has(o, "errorClass")) out.error_class = o["errorClass"].GetString();
  } else if (Has(o, "result") && o["result"].IsBool()) {
    out.outcome = o["result"].GetBool() ? Outcome::kTrue : Outcome::kFalse;
  } else if (Has(o, "inputError")) {
    out.message = o["inputError"].GetString();
  }
  if (Has(o, "cost") && o["cost"].IsUint64()) out.cost = o["cost"].GetUint64();
  if (Has(o, "costVaries") && o["costVaries"].IsBool()) out.cost_varies = o["costVaries"].GetBool();
  return out;
}

std::string ToJson(const CelOutput& out) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w(buf);
  w.StartObject();
  w.Key("id");
  w.String(out.id.c_str(), static_cast<rapidjson::SizeType>(out.id.size()));
  switch (out.outcome) {
    case Outcome::kCompileError:
      w.Key("compileError");
      w.String(out.message.c_str(), static_cast<rapidjson::SizeType>(out.message.size()));
      break;
    case Outcome::kEvalError:
      w.Key("evalError");
      w.String(out.message.c_str(), static_cast<rapidjson::SizeType>(out.message.size()));
      w.Key("errorClass");
      w.String(out.error_class.c_str());
      break;
    case Outcome::kTrue:
    case Outcome::kFalse:
      w.Key("result");
      w.Bool(out.outcome == Outcome::kTrue);
      break;
    case Outcome::kInputError:
      w.Key("inputError");
      w.String(out.message.c_str(), static_cast<rapidjson::SizeType>(out.message.size()));
      break;
  }
  if (out.cost) {
    w.Key("cost");
    w.Uint64(*out.cost);
  }
  w.EndObject();
  return buf.GetString();
}

}  // namespace draco::celdiff
