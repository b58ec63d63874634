#include "controller/kubectl/status.h"

#include <array>

#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "k8sclient/object.h"

namespace draco::kubectl {
namespace {

struct LeaseStatus {
  std::string lease, holder, renewed, owner, reason, since;
};

std::string Member(const rapidjson::Value& v, const char* key) {
  if (!v.IsObject()) return "";
  auto it = v.FindMember(key);
  return it != v.MemberEnd() && it->value.IsString() ? it->value.GetString() : "";
}

std::string Annotation(const k8s::Object& o, const std::string& key) {
  auto it = o.annotations().find(key);
  return it == o.annotations().end() ? "" : it->second;
}

}  // namespace

int RunStatus(k8s::RestClient& client, const std::string& lease_name, const std::string& output,
              std::ostream& out, std::ostream& err) {
  k8s::ListOptions opts;
  opts.field_selector = "metadata.name=" + lease_name;
  auto list = client.List(k8s::kLeases, "", opts);
  if (!list.ok()) {
    err << "error: cannot list Leases named " << lease_name << ": " << list.status().message()
        << "\n";
    return 2;
  }
  std::vector<LeaseStatus> found;
  for (const auto& item : list->items) {
    const auto& doc = item->doc();
    LeaseStatus s;
    s.lease = item->Key();
    if (doc.HasMember("spec")) {
      s.holder = Member(doc["spec"], "holderIdentity");
      s.renewed = Member(doc["spec"], "renewTime");
    }
    s.owner = Annotation(*item, "draco.dev/claim-lifecycle");
    s.reason = Annotation(*item, "draco.dev/claim-lifecycle-reason");
    s.since = Annotation(*item, "draco.dev/claim-lifecycle-since");
    found.push_back(std::move(s));
  }
  if (output == "json" || output == "yaml") {
    rapidjson::StringBuffer sb;
    rapidjson::Writer<rapidjson::StringBuffer> w(sb);
    w.StartArray();
    for (const auto& s : found) {
      w.StartObject();
      const std::array<std::pair<const char*, const std::string*>, 6> fields = {
          {{"lease", &s.lease},
           {"leader", &s.holder},
           {"renewTime", &s.renewed},
           {"claimLifecycle", &s.owner},
           {"claimLifecycleReason", &s.reason},
           {"claimLifecycleSince", &s.since}}};
      for (const auto& [k, v] : fields) {
        w.Key(k);
        w.String(v->c_str());
      }
      w.EndObject();
    }
    w.EndArray();
    out << sb.GetString() << "\n";
  } else {
    for (const auto& s : found) {
      out << "draco " << s.lease << ": leader " << (s.holder.empty() ? "none" : s.holder)
          << " (renewed " << (s.renewed.empty() ? "never" : s.renewed) << ")\n";
      if (s.owner.empty()) {
        out << "  claim lifecycle: not recorded (draco older than this plugin, or no term yet)\n";
        continue;
      }
      out << "  claim lifecycle: " << s.owner
          << (s.owner == "upstream" ? " (kube-controller-manager's resourceclaim controller "
                                      "creates, records, releases and deletes claims; draco "
                                      "allocates)"
              : s.owner == "draco"  ? " (draco creates, records, releases and deletes claims)"
                                    : " (draco is finding out)")
          << "\n  since " << s.since << ": " << s.reason << "\n";
    }
  }
  if (found.empty()) {
    err << "no Lease named " << lease_name
        << " in any namespace: is draco running (with leader election)? --lease NAME names "
           "another\n";
    return 1;
  }
  return 0;
}

}  // namespace draco::kubectl
