// Package contract holds the agent's tests against the JSON Schemas in the repository's
// contract/, which the backend and the UI share: it compiles them, and it checks that a
// probe's option struct has exactly the schema's fields, defaults, bounds and enum values.
// Only tests import it, so the agent binary carries neither the schemas nor the validator.
package contract

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Dir is the repository's contract/ directory, found from this file wherever tests run.
func Dir(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "contract")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("contract directory not found: %v", err)
	}
	return dir
}

// Load reads one schema document, e.g. "test-options/ping.v1.schema.json".
func Load(t testing.TB, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Dir(t), name))
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return doc
}

// Compile compiles one schema with every other schema of the contract loaded under its $id
// (so documents can refer to each other) and format assertions on.
func Compile(t testing.TB, name string) *jsonschema.Schema {
	t.Helper()
	compiler := jsonschema.NewCompiler()
	compiler.AssertFormat()
	var ids = map[string]string{}
	err := filepath.WalkDir(Dir(t), func(path string, entry os.DirEntry, err error) error {
		if err != nil || entry.IsDir() || !strings.HasSuffix(path, ".schema.json") {
			return err
		}
		file, err := os.Open(path)
		if err != nil {
			return err
		}
		defer file.Close()
		doc, err := jsonschema.UnmarshalJSON(file)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		id, _ := doc.(map[string]any)["$id"].(string)
		rel, _ := filepath.Rel(Dir(t), path)
		ids[filepath.ToSlash(rel)] = id
		return compiler.AddResource(id, doc)
	})
	if err != nil {
		t.Fatal(err)
	}
	id, ok := ids[name]
	if !ok {
		t.Fatalf("no schema %s in the contract", name)
	}
	schema, err := compiler.Compile(id)
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

// Enum is the enum of a schema node named by a path of keys, e.g. "$defs", "TestKind".
func Enum(t testing.TB, doc map[string]any, path ...string) []string {
	t.Helper()
	node := any(doc)
	for _, key := range path {
		object, ok := node.(map[string]any)
		if !ok {
			t.Fatalf("contract has no %s", strings.Join(path, "/"))
		}
		node = object[key]
	}
	values, _ := node.(map[string]any)["enum"].([]any)
	out := make([]string, 0, len(values))
	for _, value := range values {
		out = append(out, fmt.Sprint(value))
	}
	return out
}

// JSONFields are the JSON names of a struct's fields.
func JSONFields(t testing.TB, value any) []string {
	t.Helper()
	typ := reflect.TypeOf(value)
	names := make([]string, 0, typ.NumField())
	for i := 0; i < typ.NumField(); i++ {
		name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// SameSet fails the test naming what either side has that the other lacks.
func SameSet(t testing.TB, what string, contract, agent []string) {
	t.Helper()
	onlyContract, onlyAgent := difference(contract, agent), difference(agent, contract)
	if len(onlyContract) > 0 || len(onlyAgent) > 0 {
		t.Errorf("%s: only in the contract %v, only in the agent %v", what, onlyContract, onlyAgent)
	}
}

func difference(a, b []string) []string {
	seen := map[string]bool{}
	for _, item := range b {
		seen[item] = true
	}
	var out []string
	for _, item := range a {
		if !seen[item] {
			out = append(out, item)
		}
	}
	return out
}

// CheckOptions holds a probe's options to its test kind's schema: the struct's JSON fields
// are the schema's properties, its defaults are the schema's defaults, and decode (the
// probe's own decoder and validation, over its defaults) accepts every bound and enum value
// of the schema and refuses the values just beyond them.
func CheckOptions(t *testing.T, kind string, defaults any, decode func(json.RawMessage) error) {
	t.Helper()
	doc := Load(t, "test-options/"+kind+".v1.schema.json")
	properties, _ := doc["properties"].(map[string]any)
	names := make([]string, 0, len(properties))
	for name := range properties {
		names = append(names, name)
	}
	sort.Strings(names)
	SameSet(t, kind+" options", names, JSONFields(t, defaults))

	defaultsJSON, err := json.Marshal(defaults)
	if err != nil {
		t.Fatal(err)
	}
	var agentDefaults map[string]any
	if err := json.Unmarshal(defaultsJSON, &agentDefaults); err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		property, _ := properties[name].(map[string]any)
		if !reflect.DeepEqual(property["default"], agentDefaults[name]) {
			t.Errorf("%s.%s: the contract's default is %v, the agent's %v", kind, name, property["default"], agentDefaults[name])
		}
		for _, probe := range boundaryProbes(property) {
			options := map[string]any{name: probe.value}
			for companion, value := range companions[kind+"."+name] {
				options[companion] = value
			}
			raw, _ := json.Marshal(options)
			err := decode(raw)
			if probe.valid && err != nil {
				t.Errorf("%s.%s = %v is within the contract, but the agent refuses it: %v", kind, name, probe.value, err)
			}
			if !probe.valid && err == nil {
				t.Errorf("%s.%s = %v is outside the contract, but the agent accepts it", kind, name, probe.value)
			}
		}
	}
}

// companions are the options a value needs beside it where a schema says so only in its
// description: a throughput ramp (ramp_bps) is a UDP run, and a UDP run has a rate. The
// option's probes are decoded with them, so what is tested is the option's own bounds.
var companions = map[string]map[string]any{
	"throughput.ramp_bps": {"udp": true, "bitrate_bps": 1_000_000},
}

type boundaryProbe struct {
	value any
	valid bool
}

// boundaryProbes are values at and just beyond a property's bounds, and its enum values and
// one that is not among them.
func boundaryProbes(property map[string]any) []boundaryProbe {
	if hasType(property, "array") {
		return arrayProbes(property)
	}
	var probes []boundaryProbe
	integer := hasType(property, "integer")
	step := 1e-3
	if integer {
		step = 1
	}
	zeroAllowed := false
	bounds := property
	if alternatives, ok := property["anyOf"].([]any); ok {
		// {"anyOf": [{"const": 0}, {"minimum": ..., "maximum": ...}]}: 0 or a range.
		for _, alternative := range alternatives {
			alt, _ := alternative.(map[string]any)
			if c, ok := alt["const"].(float64); ok && c == 0 {
				zeroAllowed = true
				probes = append(probes, boundaryProbe{0.0, true})
			} else {
				bounds = alt
			}
		}
	}
	if low, ok := bounds["minimum"].(float64); ok {
		probes = append(probes, boundaryProbe{low, true})
		if below := low - step; !(zeroAllowed && below == 0) {
			probes = append(probes, boundaryProbe{below, false})
		}
	}
	if high, ok := bounds["maximum"].(float64); ok {
		probes = append(probes, boundaryProbe{high, true}, boundaryProbe{high + step, false})
	}
	if values, ok := property["enum"].([]any); ok {
		for _, value := range values {
			probes = append(probes, boundaryProbe{value, true})
		}
		probes = append(probes, boundaryProbe{"not-in-the-contract", false})
	}
	if _, ok := property["pattern"]; ok {
		probes = append(probes, boundaryProbe{"Not A Valid Value!", false})
	}
	return probes
}

// arrayProbes are one-item arrays of the item probes, and arrays at and just beyond the
// item counts. Items are numbers: the contract's array options are lists of rates.
func arrayProbes(property map[string]any) []boundaryProbe {
	items, _ := property["items"].(map[string]any)
	var probes []boundaryProbe
	for _, item := range boundaryProbes(items) {
		probes = append(probes, boundaryProbe{[]any{item.value}, item.valid})
	}
	minItems, _ := property["minItems"].(float64)
	probes = append(probes, boundaryProbe{validItems(items, int(minItems)), true})
	if minItems > 0 {
		probes = append(probes, boundaryProbe{validItems(items, int(minItems)-1), false})
	}
	if maxItems, ok := property["maxItems"].(float64); ok {
		probes = append(probes, boundaryProbe{validItems(items, int(maxItems)), true},
			boundaryProbe{validItems(items, int(maxItems)+1), false})
	}
	return probes
}

// validItems is n items rising from the items' minimum: valid wherever a list must be
// ordered without repeats, as a ramp's rates are.
func validItems(items map[string]any, n int) []any {
	low, _ := items["minimum"].(float64)
	out := make([]any, n)
	for i := range out {
		out[i] = low + float64(i)
	}
	return out
}

func hasType(property map[string]any, want string) bool {
	switch typ := property["type"].(type) {
	case string:
		return typ == want
	case []any:
		for _, item := range typ {
			if item == want {
				return true
			}
		}
	}
	return false
}
