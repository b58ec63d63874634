// env.h definitions: Type::ToString, the Env lookups, RuntimeAssignable and ActualSize.
#include "controller/cel/env.h"

#include "controller/cel/unicode.h"

namespace draco::cel {

std::string Type::ToString() const {
  switch (k) {
    case K::kDyn:
      return "dyn";
    case K::kNull:
      return "null_type";
    case K::kBool:
      return "bool";
    case K::kInt:
      return "int";
    case K::kUint:
      return "uint";
    case K::kDouble:
      return "double";
    case K::kString:
      return "string";
    case K::kBytes:
      return "bytes";
    case K::kList:
      return "list(" + params[0].ToString() + ")";
    case K::kMap:
      return "map(" + params[0].ToString() + ", " + params[1].ToString() + ")";
    case K::kType:
      return params.empty() ? "type" : "type(" + params[0].ToString() + ")";
    case K::kOptional:
      return "optional_type(" + params[0].ToString() + ")";
    case K::kOpaque:
    case K::kObject:
    case K::kParam:
      return name;
    case K::kError:
      return "*error*";
  }
  return "?";
}

void Env::AddOverload(const std::string& function, Overload overload) {
  functions_[function].push_back(std::move(overload));
}

const Type* Env::FindVariable(const std::string& name) const {
  auto it = variables_.find(name);
  return it == variables_.end() ? nullptr : &it->second;
}

const ObjectType* Env::FindObjectType(const std::string& name) const {
  auto it = objects_.find(name);
  return it == objects_.end() ? nullptr : &it->second;
}

const std::vector<Overload>* Env::FindFunction(const std::string& function) const {
  auto it = functions_.find(function);
  return it == functions_.end() ? nullptr : &it->second;
}

bool RuntimeAssignable(const Type& t, const Value& v) {
  switch (t.k) {
    case Type::K::kDyn:
    case Type::K::kParam:
    case Type::K::kError:
      return true;
    case Type::K::kNull:
      return v.kind() == Kind::kNull;
    case Type::K::kBool:
      return v.kind() == Kind::kBool;
    case Type::K::kInt:
      return v.kind() == Kind::kInt;
    case Type::K::kUint:
      return v.kind() == Kind::kUint;
    case Type::K::kDouble:
      return v.kind() == Kind::kDouble;
    case Type::K::kString:
      return v.kind() == Kind::kString;
    case Type::K::kBytes:
      return v.kind() == Kind::kBytes;
    case Type::K::kList:
      return v.kind() == Kind::kList;
    case Type::K::kMap:
      return v.kind() == Kind::kMap;
    case Type::K::kType:
      return v.kind() == Kind::kType;
    case Type::K::kOptional:
      return v.kind() == Kind::kOptional;
    case Type::K::kOpaque:
      return v.kind() == Kind::kOpaque && v.opaque().TypeName() == t.name;
    case Type::K::kObject:
      return v.kind() == Kind::kMap;
  }
  return false;
}

uint64_t ActualSize(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
      return static_cast<uint64_t>(CodePointCount(v.str()));
    case Kind::kBytes:
      return v.str().size();
    case Kind::kList:
      return v.list().size();
    case Kind::kMap:
      return v.map().size();
    case Kind::kOptional:
      return v.optional_value() ? ActualSize(*v.optional_value()) : 1;
    default:
      return 1;
  }
}

}  // namespace draco::cel