package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"

	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

// GenCELLine is one line of gen-cel output.
type GenCELLine struct {
	Input    CELInput  `json:"input"`
	Expected CELOutput `json:"expected"`
}

const celDriver = "dra.example.com"

// Bare identifiers A and C in templates stand for the driver's attribute and capacity maps.
var (
	reAttr = regexp.MustCompile(`\bA\b`)
	reCap  = regexp.MustCompile(`\bC\b`)
)

// celTemplates produce expressions; A is the driver's attribute map, C its capacity map.
// %I is a small int, %M a model name, %V a version, %Q a quantity literal, %S a short string.
var celTemplates = []string{
	// operators and arithmetic
	`A.index + %I > %I`, `A.index * %I == %I`, `A.index - %I < 0`, `A.index / %I >= 1`,
	`A.index % %I == 0`, `-A.index <= 0`, `A.index / 0 == 1`, `A.index % 0 == 1`,
	`9223372036854775807 + A.index > 0`, `-9223372036854775807 - A.index - 2 < 0`,
	`A.index * 4611686018427387904 > 0`, `uint(A.index) - 1u >= 0u`, `double(A.index) / 0.0 > 1.0`,
	`A.index == %I.0`, `A.index < %I.5`, `dyn(A.index) == %Iu`, `A.index > %I && A.index < %I`,
	`A.index >= %I || A.model == "%M"`, `!(A.index == %I)`, `A.healthy ? A.index > %I : A.index < %I`,
	`A.model < "%M"`, `A.model >= "%M"`, `true && false || !false`, `A.index != %I`,
	// missing keys, domains, has, optionals
	`A.missing == 1`, `device.attributes["other.example.com"].x == 1`, `has(A.missing)`,
	`has(A.model)`, `has(device.attributes["other.example.com"].x)`, `A.?missing.orValue(%I) == %I`,
	`A.?index.orValue(-1) == %I`, `"missing" in A`, `"model" in A`, `size(A) > %I`,
	`A.healthy`, `!A.healthy`, `A.numa == %I`, `device.attributes["ext.example.com"].family == "gpu"`,
	`device.attributes["ext.example.com"].?family.orValue("") == "fpga"`, `A.?model.hasValue()`,
	`optional.of(%I).hasValue()`, `optional.none().orValue(%I) == %I`, `A[?"model"].orValue("") == "%M"`,
	// type mismatches
	`A.model == %I`, `A.model > %I`, `A.index + "x" == "1x"`, `A.healthy + 1 > 0`, `int(A.model) > 0`,
	`1 + "a" == "1a"`, `A.index.startsWith("x")`, `A.driverVersion == "%V"`, `A.model.size() > A.healthy`,
	// device fields
	`device.driver == "%S"`, `device.driver == "dra.example.com"`, `device.allowMultipleAllocations`,
	`!device.allowMultipleAllocations && device.driver.endsWith(".com")`,
	`device.attributes.exists(d, d == "ext.example.com")`, `device.capacity.size() > 0`,
	`device.attributes.all(d, device.attributes[d].size() > 0)`,
	// macros
	`[1, 2, 3].all(x, x > %I)`, `[1, 2, 3].exists(x, x == A.index)`, `[1, 2, 3].exists_one(x, x > %I)`,
	`[1, 2, 3].map(x, x * 2).filter(x, x > A.index).size() > 0`, `A.exists(k, k == "model")`,
	`A.all(k, k.size() < 20)`, `[1, 2, 3].map(x, x > 1, x * 10).size() == 2`,
	`[10, 20].all(i, v, v > i)`, `{"a": 1}.exists(k, v, v == %I)`, `[1, 2, 3].filter(x, x % 2 == 0) == [2]`,
	`cel.bind(x, A.index * 2, x > %I)`, `cel.bind(d, A, d.model == "%M" && d.index > %I)`,
	// strings
	`A.model.charAt(0) == "a"`, `A.model.indexOf("1") >= %I`, `A.model.lastIndexOf("0") == %I`,
	`A.model.lowerAscii() == "%M"`, `A.model.upperAscii() == "A100"`, `A.model.replace("a", "b") == "b100"`,
	`A.model.split("1").size() == %I`, `A.model.substring(1) == "100"`, `A.model.substring(%I) == ""`,
	`"  x ".trim() == "x"`, `["a", "b"].join("-") == "a-b"`, `strings.quote(A.model) == "\"%M\""`,
	`"%s-%d".format([A.model, A.index]) == "%M-%I"`, `A.model.reverse() == "001a"`,
	`A.model + "x" == "%Mx"`, `size(A.model) == %I`, `A.model.contains("10")`, `A.model.endsWith("0")`,
	`A.model.startsWith("%S")`, `b"abc".size() == 3`, `string(A.index) == "%I"`, `int("12") == 12`,
	`int("x") == 1`, `uint(-1) == 1u`, `double("1.5") > 1.0`, `A.model.charAt(10) == ""`,
	// regex
	`A.model.matches("^[a-z]+[0-9]+$")`, `A.model.matches("(")`, `A.model.matches("%S")`,
	`A.model.find("[0-9]+") == "100"`, `A.model.findAll("[0-9]").size() == %I`,
	`"abc".matches(A.model)`,
	// lists
	`[3, 1, 2].sort() == [1, 2, 3]`, `[1, 2, 3].slice(1, 2) == [2]`, `[[1], [2]].flatten() == [1, 2]`,
	`[1, 1, 2].distinct().size() == 2`, `lists.range(%I).size() == %I`, `[1, 2].reverse() == [2, 1]`,
	`[1, 2, 3].first().orValue(0) == 1`, `[1, 2, 3].last().orValue(0) == 3`,
	`[1, 2, 3].sortBy(x, -x) == [3, 2, 1]`, `[1, 2, 3].sum() == 6`, `[1, 2].isSorted()`,
	`[1, 2, 3].min() == 1`, `[1, 2, 3].indexOf(2) == 1`, `[1, 2, 3][%I] == 2`, `[1, 2, 3].includes(%I)`,
	`A.index in [1, 2, 3]`, `"%M" in ["a100", "h100"]`, `[1, 2] + [3] == [1, 2, 3]`,
	// sets
	`sets.contains([1, 2, 3], [%I])`, `sets.equivalent([1, 2], [2, 1])`, `sets.intersects([1], [%I])`,
	// list attributes
	`A.links.includes(%I)`, `A.links.exists(x, x > %I)`, `%I in A.links`, `A.links.size() > %I`,
	`A.names.includes("%S")`, `A.index.includes(%I)`, `A.?links.orValue([]).all(x, x < %I)`,
	// quantity
	`C.memory.isGreaterThan(quantity("%Q"))`, `C.memory.compareTo(quantity("%Q")) == 0`,
	`C.memory.asInteger() > 0`, `C.memory.add(quantity("1Gi")).isLessThan(quantity("100Gi"))`,
	`C.memory.sub(1).sign() == 1`, `quantity("1.5").isInteger()`, `quantity("1.5").asApproximateFloat() > 1.4`,
	`isQuantity("%Q")`, `quantity("abc").sign() == 0`, `C.missing.isInteger()`, `C.cores.add(%I).asInteger() == %I`,
	`C.huge.asInteger() > 0`, `C.memory.isLessThan(C.cores)`, `C.?memory.orValue(quantity("0")).sign() >= 0`,
	// semver
	`A.driverVersion.major() >= %I`, `A.driverVersion.isLessThan(semver("%V"))`,
	`A.driverVersion.compareTo(semver("%V")) == 0`, `semver("1.2").major() == 1`,
	`semver("v1.2", true).minor() == 2`, `isSemver("%V")`, `A.driverVersion.patch() == %I`,
	`A.driverVersion.isGreaterThan(semver("1.0.0")) && A.driverVersion.minor() < %I`,
	// misc libraries
	`duration("1h") > duration("30m")`, `timestamp("2020-01-01T00:00:00Z") < timestamp("2021-01-01T00:00:00Z")`,
	`isURL("https://example.com/x")`, `ip("10.0.0.1").family() == 4`,
	`cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))`, `isIP("%S")`,
	// cost limit, non-bool results, compile errors
	`lists.range(1000).all(x, lists.range(1000).all(y, x + y >= 0))`,
	`lists.range(200).map(x, A.model + string(x)).size() == 200`,
	`lists.range(%I00).all(x, lists.range(%I00).all(y, A.index != -1))`,
	`A.index`, `A.model`, `1 + 1`, `foo == 1`, `A.model ==`, `device.nosuchfield == 1`,
}

var celStrings = []string{"a", "h1", "x", "dra", "10", "a100", ""}
var celQuantities = []string{"1Gi", "40Gi", "8Gi", "1", "500m", "1.5", "2k", "1Ei"}
var celVersions = []string{"1.0.0", "1.2.3", "2.0.0", "2.0.0-rc.1", "10.1.0"}

func (g *gen) fillTemplate(t string) string {
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] == '%' && i+1 < len(t) {
			switch t[i+1] {
			case 'I':
				fmt.Fprintf(&b, "%d", g.intn(6))
				i++
				continue
			case 'M':
				b.WriteString(pick(g, models...))
				i++
				continue
			case 'V':
				b.WriteString(pick(g, celVersions...))
				i++
				continue
			case 'Q':
				b.WriteString(pick(g, celQuantities...))
				i++
				continue
			case 'S':
				b.WriteString(pick(g, celStrings...))
				i++
				continue
			}
		}
		b.WriteByte(t[i])
	}
	s := b.String()
	s = reAttr.ReplaceAllString(s, fmt.Sprintf("device.attributes[%q]", celDriver))
	s = reCap.ReplaceAllString(s, fmt.Sprintf("device.capacity[%q]", celDriver))
	return s
}

func (g *gen) celDevice() CELDevice {
	d := CELDevice{Driver: celDriver}
	if g.chance(0.1) {
		d.Driver = "other.example.com"
	}
	a := map[resourceapi.QualifiedName]resourceapi.DeviceAttribute{}
	qual := func(n string) resourceapi.QualifiedName {
		if g.chance(0.2) {
			return resourceapi.QualifiedName(celDriver + "/" + n)
		}
		return resourceapi.QualifiedName(n)
	}
	if g.chance(0.85) {
		a[qual("model")] = resourceapi.DeviceAttribute{StringValue: ptr.To(pick(g, models...))}
	}
	if g.chance(0.85) {
		a[qual("index")] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(g.intn(5)))}
	}
	if g.chance(0.8) {
		a[qual("healthy")] = resourceapi.DeviceAttribute{BoolValue: ptr.To(g.chance(0.7))}
	}
	if g.chance(0.5) {
		a[qual("numa")] = resourceapi.DeviceAttribute{IntValue: ptr.To(int64(g.intn(3)))}
	}
	if g.chance(0.8) {
		v := pick(g, celVersions...)
		if g.chance(0.03) {
			v = "1.2" // not semver: every evaluation fails
		}
		a[qual("driverVersion")] = resourceapi.DeviceAttribute{VersionValue: ptr.To(v)}
	}
	if g.chance(0.5) {
		a["links"] = resourceapi.DeviceAttribute{IntValues: []int64{int64(g.intn(3)), int64(3 + g.intn(3))}}
	}
	if g.chance(0.3) {
		a["names"] = resourceapi.DeviceAttribute{StringValues: []string{pick(g, celStrings[:6]...), "z"}}
	}
	if g.chance(0.5) {
		a["ext.example.com/family"] = resourceapi.DeviceAttribute{StringValue: ptr.To(pick(g, "gpu", "fpga"))}
	}
	d.Attributes = a
	c := map[resourceapi.QualifiedName]resourceapi.DeviceCapacity{}
	if g.chance(0.8) {
		c["memory"] = resourceapi.DeviceCapacity{Value: resource.MustParse(pick(g, memSizes...))}
	}
	if g.chance(0.5) {
		c[qual("cores")] = resourceapi.DeviceCapacity{Value: *resource.NewQuantity(int64(g.between(1, 8)), resource.DecimalSI)}
	}
	if g.chance(0.1) {
		c["huge"] = resourceapi.DeviceCapacity{Value: resource.MustParse(pick(g, "1E", "100E", "9Ei"))}
	}
	d.Capacity = c
	if g.chance(0.3) {
		d.AllowMultipleAllocations = ptr.To(g.chance(0.5))
	}
	return d
}

func genCELLine(seed uint64, idx int) GenCELLine {
	g := newGen(seed, uint64(idx)+1<<40)
	var expr string
	switch {
	case g.chance(0.15):
		// Combine two templates.
		op := pick(g, " && ", " || ")
		expr = "(" + g.fillTemplate(pick(g, celTemplates...)) + ")" + op + "(" + g.fillTemplate(pick(g, celTemplates...)) + ")"
	default:
		expr = g.fillTemplate(celTemplates[g.intn(len(celTemplates))])
	}
	in := CELInput{ID: fmt.Sprintf("cel-%d-%d", seed, idx), Expr: expr, Device: g.celDevice()}
	if g.chance(0.05) {
		in.Features = &celFeatures{ConsumableCapacity: ptr.To(false), ListTypeAttributes: ptr.To(g.chance(0.5))}
	}
	return GenCELLine{Input: in, Expected: evalCEL(&in)}
}

func runGenCEL(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("gen-cel", flag.ContinueOnError)
	n := fs.Int("n", 1000, "number of expressions")
	seed := fs.Uint64("seed", 1, "seed")
	start := fs.Int("start", 0, "index of the first line")
	if err := fs.Parse(args); err != nil {
		return flagError{err}
	}
	lw := newLineWriter(w)
	for i := *start; i < *start+*n; i++ {
		if err := lw.write(genCELLine(*seed, i)); err != nil {
			return err
		}
	}
	return lw.flush()
}
