// Command protoschema writes the protobuf schema that k8sclient's transcoder (k8sclient/proto_json.h)
// uses to turn the API server's protobuf responses into the JSON the server would have sent.
//
// It reflects over the Go types of k8s.io/api at the version pinned in go.mod: each struct field
// with a protobuf tag becomes one field of its message, with its JSON name and the JSON rules that
// encoding/json applies to it (omitempty, inline, pointer). Run it with
//
//	cd tests/protoschema && GOTOOLCHAIN=local go run . > ../../controller/run/proto_schema.cc
//
// (the file is a C++ source holding the schema text as one raw string), and `-check FILE` compares
// instead (the differential test suite does that).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// roots: the kinds draco reads or writes, with their list kinds.
var roots = []struct {
	apiVersion string
	objs       []any
}{
	{"v1", []any{corev1.Pod{}, corev1.PodList{}, corev1.Node{}, corev1.NodeList{},
		corev1.Namespace{}, corev1.NamespaceList{}, corev1.ConfigMap{}, corev1.ConfigMapList{},
		corev1.Secret{}, corev1.SecretList{}, corev1.Event{}, corev1.EventList{},
		corev1.PersistentVolume{}, corev1.PersistentVolumeList{},
		corev1.PersistentVolumeClaim{}, corev1.PersistentVolumeClaimList{},
		metav1.Status{}}},
	{"resource.k8s.io/v1", []any{resourcev1.ResourceClaim{}, resourcev1.ResourceClaimList{},
		resourcev1.ResourceClaimTemplate{}, resourcev1.ResourceClaimTemplateList{},
		resourcev1.ResourceSlice{}, resourcev1.ResourceSliceList{},
		resourcev1.DeviceClass{}, resourcev1.DeviceClassList{},
		resourcev1.DeviceTaintRule{}, resourcev1.DeviceTaintRuleList{}}},
	{"storage.k8s.io/v1", []any{storagev1.StorageClass{}, storagev1.StorageClassList{},
		storagev1.CSINode{}, storagev1.CSINodeList{}}},
	{"coordination.k8s.io/v1", []any{coordinationv1.Lease{}, coordinationv1.LeaseList{}}},
	{"scheduling.k8s.io/v1beta1", []any{schedulingv1beta1.PodGroup{}, schedulingv1beta1.PodGroupList{}}},
	{"admissionregistration.k8s.io/v1", []any{admissionregistrationv1.MutatingWebhookConfiguration{},
		admissionregistrationv1.MutatingWebhookConfigurationList{}}},
}

// special: types whose protobuf and JSON forms are their own (see proto_json.h).
var special = map[string]string{
	"k8s.io/apimachinery/pkg/apis/meta/v1.Time":       "t",
	"k8s.io/apimachinery/pkg/apis/meta/v1.MicroTime":  "mt",
	"k8s.io/apimachinery/pkg/apis/meta/v1.Duration":   "dur",
	"k8s.io/apimachinery/pkg/apis/meta/v1.FieldsV1":   "raw",
	"k8s.io/apimachinery/pkg/runtime.RawExtension":    "raw",
	"k8s.io/apimachinery/pkg/api/resource.Quantity":   "q",
	"k8s.io/apimachinery/pkg/util/intstr.IntOrString": "ios",
}

func msgName(t reflect.Type) string {
	p := t.PkgPath()
	for _, prefix := range []string{"k8s.io/api/", "k8s.io/apimachinery/pkg/apis/", "k8s.io/apimachinery/pkg/"} {
		p = strings.TrimPrefix(p, prefix)
	}
	return p + "." + t.Name()
}

type gen struct {
	msgs map[string]string // name -> field list
	err  []string
}

// scalar returns the type code of a non-struct, non-container Go type.
func scalar(t reflect.Type) (string, bool) {
	switch t.Kind() {
	case reflect.String:
		return "s", true
	case reflect.Bool:
		return "b", true
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "i", true
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "u", true
	case reflect.Float32, reflect.Float64:
		return "d", true
	}
	return "", false
}

// typeCode: the code of a value type (elements of slices and maps included).
func (g *gen) typeCode(t reflect.Type, where string) string {
	if t.Kind() == reflect.Struct {
		if s, ok := special[t.PkgPath()+"."+t.Name()]; ok {
			return s
		}
		g.message(t)
		return "m:" + msgName(t)
	}
	if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
		return "y"
	}
	if s, ok := scalar(t); ok {
		return s
	}
	g.err = append(g.err, fmt.Sprintf("%s: unsupported type %s", where, t))
	return "?"
}

func (g *gen) message(t reflect.Type) {
	name := msgName(t)
	if _, ok := g.msgs[name]; ok {
		return
	}
	g.msgs[name] = "" // mark before recursing
	var fields []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		ptag := f.Tag.Get("protobuf")
		jtag := f.Tag.Get("json")
		if ptag == "" || ptag == "-" || jtag == "-" {
			continue
		}
		where := name + "." + f.Name
		pparts := strings.Split(ptag, ",")
		num := pparts[1]
		jparts := strings.Split(jtag, ",")
		jname := jparts[0]
		var flags strings.Builder
		for _, o := range jparts[1:] {
			switch o {
			case "omitempty":
				flags.WriteByte('o')
			case "omitzero":
				flags.WriteByte('z')
			case "inline":
				flags.WriteByte('n')
			}
		}
		if f.Anonymous && jname == "" && !strings.Contains(flags.String(), "n") {
			flags.WriteByte('n') // an embedded struct without a JSON name is inlined
		}
		ft := f.Type
		if ft.Kind() == reflect.Pointer {
			flags.WriteByte('p')
			ft = ft.Elem()
		}
		var code string
		switch {
		case ft.Kind() == reflect.Map:
			if ft.Key().Kind() != reflect.String {
				g.err = append(g.err, where+": map key not a string")
			}
			code = "map:" + g.typeCode(ft.Elem(), where)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() != reflect.Uint8:
			flags.WriteByte('r')
			code = g.typeCode(ft.Elem(), where)
		default:
			code = g.typeCode(ft, where)
		}
		if strings.Contains(flags.String(), "n") && !strings.HasPrefix(code, "m:") {
			g.err = append(g.err, where+": inline field is not a message")
		}
		if jname == "" && !strings.Contains(flags.String(), "n") {
			jname = f.Name
		}
		fields = append(fields, fmt.Sprintf("%s,%s,%s,%s", num, jname, code, flags.String()))
	}
	g.msgs[name] = strings.Join(fields, " ")
}

func render() ([]byte, error) {
	g := &gen{msgs: map[string]string{}}
	var out bytes.Buffer
	out.WriteString("// Generated by tests/protoschema from k8s.io/api v0.37.2; do not edit (see proto_schema.h).\n")
	out.WriteString("#include \"controller/run/proto_schema.h\"\n\nnamespace draco::run {\n\n")
	out.WriteString("namespace {\n\nconstexpr std::string_view kText = R\"schema(\n")
	out.WriteString("# K apiVersion kind message | M message field... ; field = number,jsonName,type,flags (see proto_json.h)\n")
	for _, r := range roots {
		for _, o := range r.objs {
			t := reflect.TypeOf(o)
			g.message(t)
			fmt.Fprintf(&out, "K %s %s %s\n", r.apiVersion, t.Name(), msgName(t))
		}
	}
	names := make([]string, 0, len(g.msgs))
	for n := range g.msgs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&out, "M %s %s\n", n, g.msgs[n])
	}
	out.WriteString(")schema\";\n\n}  // namespace\n\nstd::string_view KubeProtoSchemaText() { return kText; }\n\n}  // namespace draco::run\n")
	if len(g.err) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(g.err, "\n"))
	}
	return out.Bytes(), nil
}

func main() {
	check := flag.String("check", "", "compare with this file instead of printing")
	flag.Parse()
	b, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if *check == "" {
		os.Stdout.Write(b)
		return
	}
	have, err := os.ReadFile(*check)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if !bytes.Equal(have, b) {
		fmt.Fprintf(os.Stderr, "%s is stale: regenerate with tests/protoschema\n", *check)
		os.Exit(1)
	}
	fmt.Println("protoschema: up to date")
}
