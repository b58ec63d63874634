// Name formats (IsDnsLabel, IsQualifiedName, ...), the Validator members shared by every kind
// (selectors, opaque config, tolerations, taints), and the Validate* entry points of
// validation.h. The ResourceClaim and ResourceSlice rules are in validation_claim.cc and
// validation_slice.cc.
#include "controller/api/validation.h"

#include <algorithm>
#include <cctype>
#include <set>

#include "controller/api/codec.h"
#include "controller/api/validation_internal.h"

namespace draco::api {
namespace validation_internal {

void Validator::Selectors(const std::vector<DeviceSelector>& selectors, const std::string& path) {
  if (!MaxItems(selectors, kDeviceSelectorsMaxSize, path)) return;
  for (size_t i = 0; i < selectors.size(); ++i) {
    const std::string p = Index(path, i);
    if (!selectors[i].cel) {
      Required(Child(p, "cel"));
      continue;
    }
    const std::string& expr = selectors[i].cel->expression;
    const std::string ep = Child(Child(p, "cel"), "expression");
    if (expr.empty()) {
      Required(ep);
    } else if (expr.size() > kCelSelectorExpressionMaxLength) {
      TooLong(ep, kCelSelectorExpressionMaxLength);
    }
  }
}

void Validator::Opaque(const std::optional<OpaqueDeviceConfiguration>& opaque,
                       const std::string& path) {
  if (!opaque) return Required(Child(path, "opaque"));
  const std::string p = Child(path, "opaque");
  DriverName(opaque->driver, Child(p, "driver"));
  const std::string pp = Child(p, "parameters");
  if (opaque->parameters.empty()) return Required(pp);
  if (opaque->parameters.json.front() != '{') {
    Invalid(pp, "<value omitted>", "parameters must be a valid JSON object");
  } else if (opaque->parameters.json.size() > kOpaqueParametersMaxLength) {
    TooLong(pp, kOpaqueParametersMaxLength);
  }
}

void Validator::Tolerations(const std::vector<DeviceToleration>& tolerations,
                            const std::string& path) {
  if (!MaxItems(tolerations, kDeviceTolerationsMaxLength, path)) return;
  for (size_t i = 0; i < tolerations.size(); ++i) {
    const DeviceToleration& t = tolerations[i];
    const std::string p = Index(path, i);
    if (!t.key.empty()) LabelName(t.key, Child(p, "key"));
    if (t.operator_.empty() || t.operator_ == "Equal") {
      if (t.key.empty()) {
        Invalid(Child(p, "operator"), t.operator_,
                "value must be Exists when `key` is empty, which means \"match all values and "
                "all keys\"");
      }
      if (!IsLabelValue(t.value)) Invalid(Child(p, "value"), t.value, "must be a label value");
    } else if (t.operator_ == "Exists") {
      if (!t.value.empty()) {
        Invalid(Child(p, "operator"), t.value, "value must be empty when `operator` is 'Exists'");
      }
    } else {
      Unsupported(Child(p, "operator"), t.operator_, R"("Equal", "Exists")");
    }
    if (!t.effect.empty() && t.effect != "None" && t.effect != "NoSchedule" &&
        t.effect != "NoExecute") {
      Unsupported(Child(p, "effect"), t.effect, R"("NoExecute", "NoSchedule", "None")");
    }
  }
}

void Validator::Taint(const DeviceTaint& t, const std::string& path) {
  LabelName(t.key, Child(path, "key"));
  if (!IsLabelValue(t.value)) Invalid(Child(path, "value"), t.value, "must be a label value");
  if (t.effect.empty()) {
    Required(Child(path, "effect"));
  } else if (t.effect != "None" && t.effect != "NoSchedule" && t.effect != "NoExecute") {
    Unsupported(Child(path, "effect"), t.effect, R"("NoExecute", "NoSchedule", "None")");
  }
}

}  // namespace validation_internal

namespace {

using validation_internal::Index;
using validation_internal::kCIdentifierMaxLength;
using validation_internal::kDeviceConfigMaxSize;
using validation_internal::kDeviceStatusConditionsMaxSize;
using validation_internal::kDriverNameMaxLength;
using validation_internal::Validator;

bool IsAlnumLower(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool IsAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

bool IsDnsLabelImpl(std::string_view s, size_t max) {
  if (s.empty() || s.size() > max) return false;
  if (!IsAlnumLower(s.front()) || !IsAlnumLower(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return IsAlnumLower(c) || c == '-'; });
}

}  // namespace

bool IsDnsLabel(std::string_view s) { return IsDnsLabelImpl(s, 63); }

bool IsDnsSubdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    std::string_view part = s.substr(start, dot == std::string_view::npos ? s.npos : dot - start);
    if (!IsDnsLabelImpl(part, 253)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool IsCIdentifier(std::string_view s) {
  if (s.empty() || s.size() > kCIdentifierMaxLength) return false;
  auto head = [](char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; };
  if (!head(s[0])) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return head(c) || IsAlnum(c); });
}

bool IsLabelValue(std::string_view s) {
  if (s.empty()) return true;
  if (s.size() > 63 || !IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsLabelName(std::string_view s) {
  std::string_view name = s;
  if (size_t slash = s.find('/'); slash != std::string_view::npos) {
    if (!IsDnsSubdomain(s.substr(0, slash))) return false;
    name = s.substr(slash + 1);
  }
  return !name.empty() && IsLabelValue(name);
}

bool IsQualifiedName(std::string_view s) {
  size_t slash = s.find('/');
  if (slash == std::string_view::npos) return IsCIdentifier(s);
  std::string domain(s.substr(0, slash));
  for (char& c : domain) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return domain.size() <= kDriverNameMaxLength && IsDnsSubdomain(domain) &&
         IsCIdentifier(s.substr(slash + 1));
}

bool IsFullyQualifiedName(std::string_view s) {
  return s.find('/') != std::string_view::npos && IsQualifiedName(s);
}

bool IsStrictSemver(std::string_view s) {
  // MAJOR.MINOR.PATCH without leading zeros, optional -prerelease and +build.
  size_t i = 0;
  auto number = [&] {
    size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    size_t n = i - start;
    return n > 0 && !(n > 1 && s[start] == '0');
  };
  auto idents = [&](bool prerelease) {
    do {
      size_t start = i;
      bool numeric = true;
      while (i < s.size() && (IsAlnum(s[i]) || s[i] == '-')) {
        numeric &= s[i] >= '0' && s[i] <= '9';
        ++i;
      }
      if (i == start) return false;
      if (prerelease && numeric && i - start > 1 && s[start] == '0') return false;
    } while (i < s.size() && s[i] == '.' && ++i);
    return true;
  };
  if (!number() || i >= s.size() || s[i++] != '.') return false;
  if (!number() || i >= s.size() || s[i++] != '.') return false;
  if (!number()) return false;
  if (i < s.size() && s[i] == '-') {
    ++i;
    if (!idents(true)) return false;
  }
  if (i < s.size() && s[i] == '+') {
    ++i;
    if (!idents(false)) return false;
  }
  return i == s.size();
}

FieldErrors ValidateDeviceClass(const DeviceClass& obj) {
  Validator v;
  v.DnsSubdomain(obj.metadata.name, "metadata.name");
  v.Selectors(obj.spec.selectors, "spec.selectors");
  if (v.MaxItems(obj.spec.config, kDeviceConfigMaxSize, "spec.config")) {
    for (size_t i = 0; i < obj.spec.config.size(); ++i) {
      v.Opaque(obj.spec.config[i].opaque, Index("spec.config", i));
    }
  }
  if (obj.spec.extended_resource_name) {
    const std::string& n = *obj.spec.extended_resource_name;
    if (!IsLabelName(n) || n.find('/') == std::string::npos || n.starts_with("kubernetes.io/") ||
        n.starts_with("requests.")) {
      v.Invalid("spec.extendedResourceName", n, "must be a valid extended resource name");
    }
  }
  return v.errors;
}

FieldErrors ValidateResourceClaimSpec(const ResourceClaimSpec& spec, const std::string& path) {
  Validator v;
  v.ClaimSpec(spec, path);
  return v.errors;
}

FieldErrors ValidateResourceClaim(const ResourceClaim& obj) {
  Validator v;
  if (obj.metadata.name.empty() && obj.metadata.generate_name.empty()) {
    v.Required("metadata.name");
  } else if (!obj.metadata.name.empty()) {
    v.DnsSubdomain(obj.metadata.name, "metadata.name");
  }
  v.ClaimSpec(obj.spec, "spec");
  v.ClaimStatus(obj.status, obj.spec);
  return v.errors;
}

FieldErrors ValidateResourceClaimTemplate(const ResourceClaimTemplate& obj) {
  Validator v;
  v.DnsSubdomain(obj.metadata.name, "metadata.name");
  v.ClaimSpec(obj.spec.spec, "spec.spec");
  return v.errors;
}

FieldErrors ValidateResourceSlice(const ResourceSlice& obj) {
  Validator v;
  v.Slice(obj);
  return v.errors;
}

FieldErrors ValidateDeviceTaintRule(const DeviceTaintRule& obj) {
  Validator v;
  v.DnsSubdomain(obj.metadata.name, "metadata.name");
  if (obj.spec.device_selector) {
    const DeviceTaintSelector& s = *obj.spec.device_selector;
    if (s.driver) v.DriverName(*s.driver, "spec.deviceSelector.driver");
    if (s.pool) v.PoolName(*s.pool, "spec.deviceSelector.pool");
    if (s.device) v.DnsLabel(*s.device, "spec.deviceSelector.device");
  }
  v.Taint(obj.spec.taint, "spec.taint");
  v.MaxItems(obj.status.conditions, kDeviceStatusConditionsMaxSize, "status.conditions");
  return v.errors;
}

Status ToStatus(const FieldErrors& errors) {
  if (errors.empty()) return OkStatus();
  std::string msg;
  for (const FieldError& e : errors) {
    if (!msg.empty()) msg += "; ";
    msg += e.ToString();
  }
  return InvalidArgumentError(msg);
}

}  // namespace draco::api
