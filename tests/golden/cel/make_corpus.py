#!/usr/bin/env python3
"""Writes corpus.jsonl: hand-written `oracle cel` input lines covering the DRA CEL environment.

Run from anywhere: python3 tests/golden/cel/make_corpus.py > tests/golden/cel/corpus.jsonl
Each line is {"id", "expr", "device"[, "features"]}; expected results come from the oracle at test
time (tests/differential/cel), so this file holds inputs only.
"""
import json

DRV = "dra.example.com"
A = 'device.attributes["dra.example.com"]'
C = 'device.capacity["dra.example.com"]'

FULL = {
    "driver": DRV,
    "attributes": {
        "model": {"string": "a100"}, "index": {"int": 1}, "healthy": {"bool": True},
        "driverVersion": {"version": "1.2.3"}, "links": {"ints": [1, 2, 3]},
        "names": {"strings": ["x", "y"]}, "flags": {"bools": [True, False]},
        "versions": {"versions": ["1.0.0", "2.0.0-rc.1"]},
        "big": {"int": 9223372036854775807}, "neg": {"int": -5},
        "uni": {"string": "héllo wörld"}, "empty": {"string": ""},
        "ext.example.com/family": {"string": "gpu"}, "ext.example.com/numa": {"int": 0},
    },
    "capacity": {"memory": {"value": "40Gi"}, "cores": {"value": "8"},
                 "milli": {"value": "500m"}, "ext.example.com/bw": {"value": "10G"}},
    "allowMultipleAllocations": True,
}
EMPTY = {"driver": "other.example.com"}
BADVER = {"driver": DRV, "attributes": {"model": {"string": "x"}, "driverVersion": {"version": "1.2"}}}
NOVAL = {"driver": DRV, "attributes": {"model": {}}}
HUGE = {"driver": DRV, "capacity": {"huge": {"value": "9Ei"}, "tiny": {"value": "1n"}}}

lines = []


def add(expr, device=None, features=None):
    d = {"id": "hand-%04d" % len(lines), "expr": expr, "device": device or FULL}
    if features:
        d["features"] = features
    lines.append(d)


def many(exprs, device=None):
    for e in exprs:
        add(e, device)

# --- device variable, domains, missing keys -------------------------------------------------
many([
    'device.driver == "dra.example.com"', 'device.driver != "dra.example.com"',
    'device.driver.startsWith("dra.")', 'device.allowMultipleAllocations',
    '!device.allowMultipleAllocations', f'{A}.model == "a100"', f'{A}.index == 1',
    f'{A}.healthy', f'{A}["model"] == "a100"', f'device.attributes["ext.example.com"].family == "gpu"',
    f'device.attributes["ext.example.com"].numa == 0', f'{A}.missing == 1', f'{A}.missing',
    'device.attributes["unknown.example.com"].x == 1', 'device.attributes["unknown.example.com"].size() == 0',
    'size(device.attributes["unknown.example.com"]) == 0', '"unknown.example.com" in device.attributes',
    '"dra.example.com" in device.attributes', f'"model" in {A}', f'"missing" in {A}',
    f'has({A}.model)', f'has({A}.missing)', 'has(device.attributes["nope.example.com"].x)',
    'has(device.driver)', 'has(device.attributes)', 'device.nosuchfield == 1',
    'device.attributes.size() == 2', 'device.capacity.size() == 2', f'size({A}) == 12',
    'device.attributes.exists(d, d == "ext.example.com")', 'device.attributes.all(d, d.endsWith(".com"))',
    'device.capacity.exists_one(d, d == "dra.example.com")', f'{A}.exists(k, k == "model")',
    f'{A}.all(k, k.size() < 20)', f'{A}.filter(k, k.startsWith("n")).size() == 2',
    f'{A}.map(k, k.size()).size() == 12', 'device.attributes.all(d, device.attributes[d].size() > 0)',
    f'{A}.model == "a100" && device.attributes["ext.example.com"].family == "gpu"',
    f'{A}.missing == 1 || true', f'true || {A}.missing == 1', f'{A}.missing == 1 && false',
    f'false && {A}.missing == 1', f'{A}.missing == 1 || false', f'{A}.missing == 1 && true',
    f'{A}.?missing.orValue(7) == 7', f'{A}.?model.orValue("") == "a100"', f'{A}.?model.hasValue()',
    f'{A}.?missing.hasValue()', f'{A}[?"model"].value() == "a100"', f'{A}[?"missing"].value() == 1',
    f'device.attributes[?"nope.example.com"].hasValue()', f'device.attributes.?foo.?bar.hasValue()',
    f'device.?driver.orValue("") == "dra.example.com"', f'{A}.?links[?5].hasValue()',
    f'{A}.?links[?1].orValue(0) == 2',
])
many(['device.driver == "dra.example.com"', f'{A}.model == "a100"', 'device.attributes.size() == 0',
      'device.allowMultipleAllocations', f'{A}.?model.orValue("none") == "none"',
      'device.capacity["other.example.com"].size() == 0', f'has({A}.model)'], EMPTY)
many([f'{A}.model == "x"', 'true', 'device.driver == ""', '1 / 0 == 1'], BADVER)
many([f'{A}.model == "x"', 'true'], NOVAL)

# --- operators and arithmetic -----------------------------------------------------------------
many([
    '1 + 2 == 3', '7 - 10 == -3', '6 * 7 == 42', '7 / 2 == 3', '-7 / 2 == -3', '7 % 3 == 1',
    '-7 % 3 == -1', '1 / 0 == 0', '1 % 0 == 0', '1u / 0u == 0u', '5u % 0u == 0u',
    '9223372036854775807 + 1 > 0', '-9223372036854775807 - 2 < 0', '4611686018427387904 * 2 > 0',
    '-9223372036854775808 / -1 < 0', '-9223372036854775808 % -1 == 0', '-(-9223372036854775808) > 0',
    f'{A}.big + 1 > 0', f'{A}.big * 2 > 0', f'{A}.neg * {A}.big < 0', '18446744073709551615u + 1u > 0u',
    '0u - 1u > 0u', '2u * 9223372036854775808u > 0u', 'uint(-1) == 1u', 'int(18446744073709551615u) > 0',
    'int(1e19) > 0', 'int(-1e19) < 0', 'uint(1e20) > 0u', 'uint(-1.0) == 0u', 'int(2.9) == 2',
    'int(-2.9) == -2', 'double(1) / 0.0 > 1e308', '-1.0 / 0.0 < 0.0', '0.0 / 0.0 == 0.0 / 0.0',
    '0.0 / 0.0 != 0.0 / 0.0', 'double("nan") < 1.0', 'double("NaN") >= 1.0', '1 < double("inf")',
    '1.5 + 2.5 == 4.0', '0.1 + 0.2 == 0.3', '3.0 * 2.0 == 6.0', '1 == 1.0', '1 == 1u', '1u == 1.0',
    '2 > 1.5', '1u < 2', '-1 < 1u', '3.5 >= 3', 'dyn(1) == dyn(1.0)', 'dyn(1) == dyn("1")',
    '"a" < "b"', '"abc" <= "abd"', '"B" < "a"', 'b"a" < b"b"', 'true > false', 'false < true',
    '"a" + "b" == "ab"', 'b"a" + b"b" == b"ab"', '[1] + [2] == [1, 2]', '[] + [] == []',
    '!true == false', '!!true', 'true ? 1 == 1 : 2 == 3', 'false ? 1 / 0 == 0 : true',
    'true ? true : 1 / 0 == 0', f'{A}.healthy ? {A}.index > 0 : {A}.missing', f'{A}.missing ? true : false',
    f'({A}.index > 0 ? {A} : device.attributes["ext.example.com"]).model == "a100"',
    f'({A}.index > 5 ? {A} : device.attributes["ext.example.com"]).family == "gpu"',
    'null == null', 'dyn(null) == 1', '1 == dyn(null)', 'dyn(1) != dyn(null)',
    'type(1) == int', 'type("a") == string', 'type(1u) == uint', 'type(1.0) == double',
    'type(true) == bool', 'type([]) == list', 'type({}) == map', 'type(null) == null_type',
    'type(b"") == bytes', 'type(int) == type', f'type({A}.model) == string', f'type({A}) == map',
    'type(optional.none()) == optional_type', 'dyn(1) + dyn(2) == 3', 'dyn(1) + dyn(2.0) == 3.0',
    'dyn("a") + dyn(1) == "a1"', 'dyn([1]) + dyn(2) == [1, 2]', '1 + dyn(true) == 2',
    f'{A}.model + 1 == "a1"', f'{A}.model > 1', f'{A}.model == 1', f'{A}.healthy + 1 > 0',
    f'{A}.index.startsWith("x")', f'{A}.model.size() > {A}.healthy', f'-{A}.model == ""',
    f'!{A}.model', f'{A}.model && true', f'{A}.model || false', 'dyn("x") || true',
    'true || dyn("x")', 'dyn("x") && false', 'dyn("x") || false', 'dyn(1) ? true : false',
])
# --- non-bool results, compile errors -------------------------------------------------------
many([
    '1', '"a"', f'{A}.model', f'{A}.index', f'{A}', 'device', 'null', '[true]', '{}',
    f'{A}.healthy', f'dyn({A}.index)', 'dyn(true)', 'optional.of(true)', '1 +', 'a b',
    '"unterminated', '1 == "a"', 'foo == 1', 'device.driver.size', 'size()', 'size(1)',
    'int("x") == 1', 'uint("-1") == 1u', 'double("abc") > 0.0', 'bool("maybe")', 'int("12") == 12',
    'bool("true") && bool("T") && !bool("0")', 'string(1) == "1"', 'string(1.5) == "1.5"',
    'string(true) == "true"', 'string(b"abc") == "abc"', 'string(b"\\xff") == ""',
    'bytes("abc") == b"abc"', 'double("1e3") == 1000.0', 'double("-Infinity") < 0.0',
    'double("0x1p-2") == 0.25', 'int(" 1") == 1', 'int("+5") == 5', 'uint("18446744073709551616") > 0u',
    '[1, "a"] == [1]', '{"a": 1, "b": "x"}.size() == 2', '[1, dyn("a")].size() == 2',
    '{1: "a", "b": "c"}.size() == 2', '[[1], ["a"]].size() == 2', '[1, 2.0].size() == 2',
    'x.all(y, true)', '[1].all(1, true)', '[1].map(x)', '[1].exists_one(x)', 'has(1)',
    'has(device)', 'has(device.driver.x)', 'cel.bind(1, 2, true)', '[1, 2].all(x, x)',
    '[1, 2].filter(x, x + 1)', '[].map(x, x).size() == 0', 'device.driver[0] == "d"',
    f'{A}["model"]["x"] == 1', f'{A}.model.x == 1', f'{A}.links.x == 1', f'{A}.links["a"] == 1',
    f'{A}.links[5] == 1', f'{A}.links[-1] == 1', f'{A}.links[1u] == 2', f'{A}.links[1.0] == 2',
    f'{A}.links[1.5] == 2', f'{A}.links[true] == 2', '[1, 2, 3][3] == 1', '[1, 2][0] == 1',
    '{"a": 1}["b"] == 1', '{"a": 1}.b == 1', '{1: "x"}[1.0] == "x"', '{1: "x"}[1u] == "x"',
    '{true: 1}[true] == 1', '{"a": 1, "a": 2}.size() == 1', '{[1]: 1}.size() == 1',
    'dyn({"a": 1})[dyn([1])] == 1', '"abc"[0] == "a"', '1.size() == 1',
])
# --- macros, comprehensions, bind -----------------------------------------------------------
many([
    '[1, 2, 3].all(x, x > 0)', '[1, 2, 3].all(x, x > 1)', '[].all(x, false)', '[].exists(x, true)',
    '[1, 2, 3].exists(x, x == 2)', '[1, 2, 3].exists_one(x, x > 1)', '[1, 2, 3].exists_one(x, x > 2)',
    '[1, 2, 3].existsOne(x, x > 2)', '[1, 2, 3].map(x, x * 2) == [2, 4, 6]',
    '[1, 2, 3].map(x, x > 1, x * 10) == [20, 30]', '[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]',
    '[1, 0].all(x, 1 / x > 0)', '[0, 1].exists(x, 1 / x > 0)', '[1, 0].exists(x, 1 / x > 0)',
    '[0, 1].all(x, 1 / x > 0)', '[0, 1].exists_one(x, 1 / x > 0)', '[1, 2].map(x, 1 / (x - 1)).size() == 2',
    '{"a": 1, "b": 2}.all(k, k.size() == 1)', '{"a": 1, "b": 2}.map(k, k).sort() == ["a", "b"]',
    '{"a": 1}.exists(k, v, v == 1)', '[10, 20].all(i, v, v > i)', '[10, 20].exists(i, v, i == 1 && v == 20)',
    '[1, 2].existsOne(i, v, v == 2)', '[1, 2].transformList(i, v, i + v) == [1, 3]',
    '[1, 2].transformList(i, v, v > 1, v * 2) == [4]', '{"a": 1}.transformMap(k, v, v + 1) == {"a": 2}',
    '[1, 2].transformMap(i, v, v * 10) == {0: 10, 1: 20}', '{"a": 1}.transformMapEntry(k, v, {v: k}) == {1: "a"}',
    '[1, 1].transformMapEntry(i, v, {v: i}).size() == 1', '[1, 2].all(x, x, true)',
    'cel.bind(x, 5, x * x == 25)', f'cel.bind(d, {A}, d.model == "a100" && d.index == 1)',
    'cel.bind(x, 1, cel.bind(y, x + 1, y == 2))', 'cel.bind(x, [1, 2], x.map(y, y + 1) == [2, 3])',
    'cel.bind(x, 1 / 0, true)', 'cel.bind(x, 1 / 0, x == 1)', f'[1, 2, 3].exists(x, x == {A}.index)',
    f'{A}.links.all(x, x > 0)', f'{A}.links.exists(x, x > 2)', f'{A}.links.map(x, x * x) == [1, 4, 9]',
    f'{A}.names.exists(n, n == "y")', f'{A}.flags.exists_one(b, b)', f'{A}.versions.all(v, v.major() >= 1)',
    '[[1, 2], [3]].map(l, l.size()) == [2, 1]', '[1, 2].map(x, [1, 2].map(y, x * y)) == [[1, 2], [2, 4]]',
    '[1, 2, 3].map(x, x).filter(x, x > 1).all(x, x > 1)', 'lists.range(3).map(x, x) == [0, 1, 2]',
    '[1, 2].map(x, x, x) == [1, 2]', '[1, 2].sortBy(x, -x) == [2, 1]', '["bb", "a"].sortBy(s, s.size()) == ["a", "bb"]',
    '[1, 2].sortBy(x, [x]) == [1, 2]', f'{A}.names.sortBy(n, n) == ["x", "y"]', '1.all(x, true)',
    '"abc".all(x, true)', 'dyn(1).exists(x, true)', '[1, 2].optMap(x, x) == 1',
    'optional.of(2).optMap(x, x * 2).value() == 4', 'optional.none().optMap(x, x * 2).hasValue()',
    'optional.of(2).optFlatMap(x, optional.of(x + 1)).value() == 3',
    'optional.of(2).optFlatMap(x, optional.none()).hasValue()',
])
# --- cost limit ---------------------------------------------------------------------------------
many([
    'lists.range(1000).all(x, lists.range(1000).all(y, x + y >= 0))',
    'lists.range(1001).map(x, lists.range(1001)).size() > 0',
    'lists.range(400).all(x, lists.range(400).all(y, true))',
    'lists.range(300).all(x, lists.range(300).all(y, x != y || x == y))',
    f'lists.range(200000).exists(x, x == {A}.index)', 'lists.range(100000).exists(x, x < 0)',
    'lists.range(30000).map(x, x).size() == 30000', '"abc".repeat(3) == "abcabcabc"',
    f'lists.range(500).map(x, {A}.model + string(x)).size() == 500',
    'lists.range(5000).sort().size() == 5000', 'lists.range(1000).distinct().size() == 1000',
    'lists.range(2000).sortBy(x, -x)[0] == 1999',
    'sets.contains(lists.range(2000), lists.range(2000))',
    'lists.range(20).all(a, lists.range(20).all(b, lists.range(20).all(c, lists.range(20).all(d, true))))',
])
# --- strings -----------------------------------------------------------------------------------
many([
    f'{A}.model.contains("10")', f'{A}.model.startsWith("a")', f'{A}.model.endsWith("00")',
    f'{A}.model.charAt(0) == "a"', f'{A}.model.charAt(4) == ""', f'{A}.model.charAt(5) == ""',
    f'{A}.model.charAt(-1) == ""', f'{A}.uni.charAt(1) == "é"', f'{A}.model.indexOf("1") == 1',
    f'{A}.model.indexOf("") == 0', f'{A}.model.indexOf("0", 3) == 3', f'{A}.model.indexOf("0", 9) == 3',
    f'{A}.model.indexOf("0", -1) == 3', f'{A}.uni.indexOf("w") == 6', f'{A}.model.lastIndexOf("0") == 3',
    f'{A}.model.lastIndexOf("") == 4', f'{A}.model.lastIndexOf("0", 2) == 2', f'{A}.model.lastIndexOf("0", 7) == 3',
    f'{A}.model.lowerAscii() == "a100"', f'{A}.model.upperAscii() == "A100"', f'{A}.uni.upperAscii() == "HéLLO WöRLD"',
    f'{A}.model.replace("0", "x") == "a1xx"', f'{A}.model.replace("0", "x", 1) == "a1x0"',
    f'{A}.model.replace("", "-") == "-a-1-0-0-"', f'{A}.model.replace("0", "x", -1) == "a1xx"',
    f'{A}.model.split("1") == ["a", "00"]', f'{A}.model.split("") == ["a", "1", "0", "0"]',
    f'{A}.model.split("0", 2) == ["a1", "0"]', f'{A}.model.split("0", 0) == []', f'{A}.model.split("0", -1).size() == 3',
    f'{A}.model.substring(1) == "100"', f'{A}.model.substring(1, 3) == "10"', f'{A}.model.substring(5) == ""',
    f'{A}.model.substring(3, 1) == ""', f'{A}.model.substring(-1) == ""', f'{A}.uni.substring(1, 2) == "é"',
    '"  x \\t\\n".trim() == "x"', '"\\u00a0x\\u2003".trim() == "x"', '"\\u200bx".trim() == "\\u200bx"',
    '"\\u0085x\\u3000".trim() == "x"', '"\\u180ex".trim() == "\\u180ex"', '"\\ufeffx".trim() == "\\ufeffx"',
    '["a", "b"].join() == "ab"', '["a", "b"].join("-") == "a-b"', '[].join(",") == ""',
    'dyn([1, 2]).join(",") == ""', 'strings.quote("a\\"b\\n") == "\\"a\\\\\\"b\\\\n\\""',
    f'strings.quote({A}.uni) == "\\"héllo wörld\\""', f'{A}.model.reverse() == "001a"',
    f'"%s-%d".format([{A}.model, {A}.index]) == "a100-1"', '"%.2f".format([3.14159]) == "3.14"',
    '"%x %X %o %b".format([255, 255, 8, 5]) == "ff FF 10 101"',
    '"%x".format(["hi"]) == "6869"', '"%s".format([[1, "a", 2.5]]) == "[1, \\"a\\", 2.500000]"',
    '"%s".format([{"b": 1, "a": true}]) == "{\\"a\\":true, \\"b\\":1}"', '"%s %s".format([null, b"x"]) == "null x"',
    '"%f".format([1234567.0]) == "1,234,567.000000"', '"%d".format(["x"]) == ""', '"%d %d".format([1]) == ""',
    '"%d".format([1, 2]) == ""', '"%z".format([1]) == ""', '"%.f".format([1.0]) == ""', '"100%%".format([]) == "100%"',
    f'"%d".format([{A}.model]) == ""', f'"%s".format([{A}.links]) == "[1, 2, 3]"', f'"%b".format([{A}.healthy]) == "1"',
    f'"%s".format([device.capacity["dra.example.com"].memory]) == ""', '"%f".format(["NaN"]) == "NaN"',
    f'size({A}.uni) == 11', f'{A}.uni.size() == 11', 'size(b"héllo") == 6', f'{A}.empty == ""',
    f'{A}.empty.size() == 0', '"abc" == "abc"', '"ﬀ" == "ff"', '"\\x41" == "A"', "'single' == \"single\"",
    'r"\\n" == "\\\\n"', '"""multi\nline""".size() == 10', 'b"\\377".size() == 1', '"\\U0001F600".size() == 1',
])
# --- regex -------------------------------------------------------------------------------------
many([
    f'{A}.model.matches("^[a-z]+[0-9]+$")', f'{A}.model.matches("A1")', f'{A}.model.matches("(?i)A1")',
    f'matches({A}.model, "1")', f'{A}.model.matches("(")', f'{A}.model.matches({A}.model)',
    f'{A}.model.matches("[")', f'"abc".matches({A}.empty)', f'{A}.model.matches("\\\\d+")',
    f'{A}.uni.matches("^h.llo")', f'{A}.model.find("[0-9]+") == "100"', f'{A}.model.find("z") == ""',
    f'{A}.model.findAll("[0-9]") == ["1", "0", "0"]', f'{A}.model.findAll("[0-9]", 2) == ["1", "0"]',
    f'{A}.model.findAll("[0-9]", 0) == []', f'{A}.model.findAll("[0-9]", -1).size() == 3',
    f'{A}.model.find("(") == ""', f'"aaa".findAll("a*").size() == 1', f'"abab".findAll("").size() == 5',
    f'{A}.model.matches("\\\\p{{L}}")', 'dyn(1).matches("1")',
])
# --- lists, sets ------------------------------------------------------------------------------
many([
    '1 in [1, 2]', '3 in [1, 2]', '1.0 in [1, 2]', '"a" in ["a"]', '"a" in {"a": 1}', '1 in {1: 2}',
    f'{A}.index in [1, 2, 3]', f'{A}.model in ["a100", "h100"]', f'2 in {A}.links', f'9 in {A}.links',
    f'"y" in {A}.names', f'{A}.index in {A}.links', 'size([1, 2]) == 2', '[1, 2].size() == 2',
    '[3, 1, 2].sort() == [1, 2, 3]', '["b", "a"].sort() == ["a", "b"]', '[1, 2.0].sort() == [1, 2.0]',
    '[[1]].sort() == [[1]]', 'dyn([1, "a"]).sort() == []', '[true, false].sort() == [false, true]',
    '[1, 2, 3].slice(1, 2) == [2]', '[1, 2, 3].slice(2, 1) == []', '[1, 2, 3].slice(0, 4) == []',
    '[1, 2, 3].slice(-1, 1) == []', '[[1], [2, [3]]].flatten() == [1, 2, [3]]',
    '[[1], [2, [3]]].flatten(2) == [1, 2, 3]', '[[1]].flatten(-1) == []', 'dyn([1, [2]]).flatten() == [1, 2]',
    '[1, 1, 2].distinct() == [1, 2]', '[1, 1.0, 1u].distinct().size() == 1', 'lists.range(3) == [0, 1, 2]',
    'lists.range(0) == []', 'lists.range(-1) == []', '[1, 2].reverse() == [2, 1]', '[1, 2, 3].first().value() == 1',
    '[].first().hasValue()', '[1, 2, 3].last().orValue(0) == 3', '[].last().orValue(9) == 9',
    '[1, 2, 3].sum() == 6', '[1u, 2u].sum() == 3u', '[1.5, 2.5].sum() == 4.0', '[].sum() == 0',
    f'{A}.links.sum() == 6', '[9223372036854775807, 1].sum() > 0', '[1, 2].isSorted()', '[2, 1].isSorted()',
    '["a", "b"].isSorted()', '[1, 2, 3].min() == 1', '[1, 2, 3].max() == 3', '[].min() == 0',
    '["b", "a"].min() == "a"', '[1, 2, 3].indexOf(2) == 1', '[1, 2, 3].indexOf(5) == -1',
    '[1, 2, 1].lastIndexOf(1) == 2', '[1.0, 2.0].indexOf(2) == 1', '[1, 2, 3].includes(2)',
    '[1, 2, 3].includes(5)', f'{A}.links.includes(3)', f'{A}.index.includes(1)', f'{A}.model.includes("a100")',
    f'{A}.names.includes("x")', 'lists.range(100).includes(99)', '"a".includes("a")',
    f'{A}.?links.orValue([]).all(x, x < 5)', f'{A}.?nolist.orValue([]).all(x, x < 0)',
    'sets.contains([1, 2, 3], [1, 2])', 'sets.contains([1, 2], [3])', 'sets.contains([], [])',
    'sets.contains([1], [1.0])', 'sets.equivalent([1, 2], [2, 1, 1])', 'sets.equivalent([1], [1, 2])',
    'sets.intersects([1, 2], [2, 3])', 'sets.intersects([1], [])', f'sets.contains({A}.links, [1, 3])',
    f'sets.intersects({A}.names, ["y", "z"])', '[1, 2] == [1, 2]', '[1, 2] != [2, 1]', '[1] == [1.0]',
    '{"a": 1} == {"a": 1.0}', '{"a": 1} == {"b": 1}', '[] == []', '{} == {}', '[[1]] == [[1]]',
    '{"a": [1]} != {"a": [2]}', 'dyn([1, "a"]) == dyn([1, "a"])',
])
# --- quantity ---------------------------------------------------------------------------------
many([
    f'{C}.memory.isGreaterThan(quantity("1Gi"))', f'{C}.memory.isLessThan(quantity("1Gi"))',
    f'{C}.memory.compareTo(quantity("40Gi")) == 0', f'{C}.memory.compareTo(quantity("42949672960")) == 0',
    f'{C}.memory == quantity("40Gi")', f'quantity("40Gi") == {C}.memory', f'{C}.memory == quantity("40G")',
    f'{C}.memory.add(quantity("1Gi")) == quantity("41Gi")', f'quantity("41Gi") == {C}.memory.add(quantity("1Gi"))',
    f'{C}.memory.add(quantity("1Gi")).compareTo(quantity("41Gi")) == 0', f'{C}.cores.add(2).asInteger() == 10',
    f'{C}.cores.sub(10).asInteger() == -2', f'{C}.cores.sub(quantity("500m")).isInteger()',
    f'{C}.milli.isInteger()', f'{C}.milli.asApproximateFloat() == 0.5', f'{C}.milli.asInteger() == 0',
    f'sign({C}.cores) == 1', f'sign({C}.cores.sub(8)) == 0', f'sign(quantity("-1")) == -1',
    f'{C}.cores.sign() == 1', 'quantity("1.5").isInteger()', 'quantity("1.5").asApproximateFloat() > 1.4',
    'isQuantity("1Gi")', 'isQuantity("1GiB")', 'isQuantity("")', 'isQuantity("1e3")', 'isQuantity(" 1")',
    'quantity("abc").isInteger()', 'quantity("1e3").asInteger() == 1000', 'quantity("1E").asInteger() > 0',
    'quantity("10E").asInteger() > 0', 'quantity("-1.5Ki").asApproximateFloat() == -1536.0',
    f'device.capacity["ext.example.com"].bw.isGreaterThan(quantity("1G"))', f'{C}.missing.isInteger()',
    f'{C}.?memory.orValue(quantity("0")).isGreaterThan(quantity("0"))', f'{C}.?nope.orValue(quantity("1")).isInteger()',
    f'{C}.memory.isLessThan({C}.cores)', f'{C}.memory > quantity("1")', f'{C}.memory + 1 == 1',
    f'{C}.memory == 1', f'dyn({C}.memory) == dyn(1)', f'dyn(1) == dyn({C}.memory)',
    f'[{C}.memory].exists(q, q.isGreaterThan(quantity("1")))', f'{C}.memory in [quantity("40Gi")]',
    f'quantity("1").add(quantity("2")) == quantity("1").add(quantity("2"))',
    f'{C}.memory.add(9223372036854775807).isInteger()',
])
many([f'{C}.huge.asInteger() > 0', f'{C}.huge.isInteger()', f'{C}.tiny.isInteger()',
      f'{C}.tiny.asApproximateFloat() > 0.0', f'{C}.huge.add({C}.huge).isGreaterThan({C}.huge)',
      f'{C}.tiny.sub({C}.tiny).sign() == 0'], HUGE)
# --- semver -----------------------------------------------------------------------------------
many([
    f'{A}.driverVersion.major() == 1', f'{A}.driverVersion.minor() == 2', f'{A}.driverVersion.patch() == 3',
    f'{A}.driverVersion.isGreaterThan(semver("1.0.0"))', f'{A}.driverVersion.isLessThan(semver("1.10.0"))',
    f'{A}.driverVersion.compareTo(semver("1.2.3")) == 0', f'{A}.driverVersion == semver("1.2.3")',
    f'semver("1.2.3") == {A}.driverVersion', f'{A}.driverVersion == "1.2.3"', f'"1.2.3" == {A}.driverVersion',
    f'{A}.driverVersion != "1.2.3"', 'semver("1.2.3-rc.1").isLessThan(semver("1.2.3"))',
    'semver("1.2.3+build").compareTo(semver("1.2.3")) == 0', 'semver("1.2").major() == 1',
    'semver("v1.2", true).minor() == 2', 'semver("01.2.3", true).major() == 1', 'semver("1.2.3.4", true).major() == 1',
    'isSemver("1.2.3")', 'isSemver("1.2")', 'isSemver("v1.2.3")', 'isSemver("v1.2.3", true)',
    'isSemver("1.2", true)', 'isSemver("1.02.3")', 'isSemver("1.2.3-01")', 'isSemver("1.2.3-rc.01")',
    'semver("2.0.0-alpha").isLessThan(semver("2.0.0-alpha.1"))', 'semver("2.0.0-alpha.1").isLessThan(semver("2.0.0-beta"))',
    f'{A}.versions[1].isLessThan(semver("2.0.0"))', f'{A}.versions.exists(v, v == semver("1.0.0"))',
    f'semver("1.0.0") in {A}.versions', f'{A}.versions.includes(semver("1.0.0"))',
    f'{A}.driverVersion.major() + 1 == 2', 'semver("x").major() == 1', 'semver("1.2.3").isGreaterThan(1)',
])
# --- ip/cidr/url --------------------------------------------------------------------------------
many([
    'ip("10.0.0.1").family() == 4', 'ip("::1").family() == 6', 'isIP("10.0.0.256")', 'isIP("010.0.0.1")',
    'isIP("fe80::1%eth0")', 'isIP("::ffff:1.2.3.4")', 'ip("1.2.3.4").isGlobalUnicast()', 'ip("127.0.0.1").isLoopback()',
    'ip("0.0.0.0").isUnspecified()', 'ip("169.254.1.1").isLinkLocalUnicast()', 'ip("ff02::1").isLinkLocalMulticast()',
    'ip.isCanonical("2001:db8::1")', 'ip.isCanonical("2001:DB8::1")', 'ip.isCanonical("bad")',
    'string(ip("2001:db8:0:0:0:0:0:1")) == "2001:db8::1"', 'ip("1.2.3.4") == ip("1.2.3.4")', 'ip("x").family() == 4',
    'cidr("10.0.0.0/8").containsIP(ip("10.1.2.3"))', 'cidr("10.0.0.0/8").containsIP("11.0.0.1")',
    'cidr("10.0.0.0/8").containsIP("nope")', 'cidr("10.0.0.0/8").containsCIDR("10.1.0.0/16")',
    'cidr("10.0.0.0/16").containsCIDR(cidr("10.0.0.0/8"))', 'cidr("::/0").containsIP(ip("1.2.3.4"))',
    'cidr("10.1.2.3/8").masked() == cidr("10.0.0.0/8")', 'cidr("10.0.0.0/8").prefixLength() == 8',
    'cidr("10.0.0.0/8").ip() == ip("10.0.0.0")', 'isCIDR("10.0.0.0/33")', 'isCIDR("10.0.0.0/08")', 'isCIDR("10.0.0.0")',
    'string(cidr("2001:db8::/32")) == "2001:db8::/32"', 'cidr("1.2.3.4").prefixLength() == 0',
    'isURL("https://example.com/x")', 'isURL("example.com")', 'isURL("/abs/path")', 'isURL("")',
    'url("https://example.com:8443/a/b?x=1").getScheme() == "https"', 'url("https://example.com:8443/a").getHost() == "example.com:8443"',
    'url("https://example.com:8443/a").getHostname() == "example.com"', 'url("https://example.com:8443/a").getPort() == "8443"',
    'url("https://example.com/a%20b").getEscapedPath() == "/a%20b"', 'url("https://e.com/?a=1&a=2&b=").getQuery() == {"a": ["1", "2"], "b": [""]}',
    'url("https://[::1]:80/").getHostname() == "::1"', 'url("not a url").getScheme() == ""', 'isURL("http://x:port/")',
    'url("https://example.com") == url("https://example.com")',
])
# --- optionals ----------------------------------------------------------------------------------
many([
    'optional.of(1).hasValue()', 'optional.none().hasValue()', 'optional.of(1).value() == 1',
    'optional.none().value() == 1', 'optional.none().orValue(5) == 5', 'optional.of(1).orValue(1 / 0) == 1',
    'optional.none().orValue(1 / 0) == 1', 'optional.none().or(optional.of(2)).value() == 2',
    'optional.of(1).or(optional.of(2)).value() == 1', 'optional.ofNonZeroValue(0).hasValue()',
    'optional.ofNonZeroValue("").hasValue()', 'optional.ofNonZeroValue([1]).hasValue()',
    'optional.of(1) == optional.of(1)', 'optional.none() == optional.none()', '[?optional.of(1), ?optional.none()] == [1]',
    '{?"a": optional.of(1), ?"b": optional.none()} == {"a": 1}', '{"a": 1}[?"a"].value() == 1',
    '{"a": 1}.?a.value() == 1', '{"a": 1}.?b.hasValue()', '[1, 2][?5].hasValue()', '[1, 2][?1].value() == 2',
    'optional.of({"a": 1}).a.value() == 1', 'optional.of([1]).?x.hasValue()', '[?1] == [1]',
])
# --- timestamps / durations --------------------------------------------------------------------
many([
    'duration("1h") > duration("30m")', 'duration("1h30m") == duration("90m")', 'duration("1.5s") == duration("1500ms")',
    'duration("-1s") < duration("0")', 'duration("1x") > duration("1s")', 'duration("1d") > duration("1s")',
    'string(duration("1h")) == "3600s"', 'duration("1h").getMinutes() == 60', 'duration("1500ms").getMilliseconds() == 500',
    'timestamp("2020-01-01T00:00:00Z") < timestamp("2021-01-01T00:00:00Z")', 'timestamp("2020-13-01T00:00:00Z") == timestamp(0)',
    'timestamp("2020-03-01T00:00:00Z") - timestamp("2020-02-01T00:00:00Z") == duration("696h")',
    'timestamp("2020-01-01T00:00:00Z") + duration("24h") == timestamp("2020-01-02T00:00:00Z")',
    'timestamp("2020-03-01T00:00:00Z").getFullYear() == 2020', 'timestamp("2020-03-01T00:00:00Z").getMonth() == 2',
    'timestamp("2020-03-01T00:00:00Z").getDayOfMonth() == 0', 'timestamp("2020-03-01T00:00:00Z").getDate() == 1',
    'timestamp("2020-03-01T00:00:00Z").getDayOfWeek() == 0', 'timestamp("2020-03-01T00:00:00Z").getDayOfYear() == 60',
    'timestamp("2020-03-01T23:30:00Z").getHours("+01:00") == 0', 'timestamp(86400) == timestamp("1970-01-02T00:00:00Z")',
    'int(timestamp("1970-01-02T00:00:00Z")) == 86400', 'timestamp("9999-12-31T23:59:59Z") + duration("1s") > timestamp(0)',
    f'duration({A}.model) > duration("1s")', '[duration("2s"), duration("1s")].sort()[0] == duration("1s")',
    '[timestamp(2), timestamp(1)].min() == timestamp(1)', 'type(duration("1s")) == type(duration("2s"))',
])
# --- length limit -------------------------------------------------------------------------------
long_or = " || ".join('device.driver == "driver-%04d.example.com"' % i for i in range(300))
add(long_or)                                   # > 10 KiB: the scheduler does not re-validate length
add(long_or + ' || device.driver == "dra.example.com"')
add("(" * 30 + "true" + ")" * 30)
add("(" * 300 + "true" + ")" * 300)
add(" && ".join(["true"] * 2000))
add("[" * 40 + "1" + "]" * 40 + " != []")
add("-" * 150 + "1 == 1")
add("!" * 200 + "true")
add('"' + "x" * 12000 + '".size() == 12000')
add(" + ".join(["1"] * 500) + " == 500")

for d in lines:
    print(json.dumps(d, ensure_ascii=False))
