package result_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fathom-net/fathom/agents/internal/probe/ping"
	"github.com/fathom-net/fathom/agents/internal/result"
)

// contractDir finds backend/measurements/contract from this file, wherever tests run from.
func contractDir(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "backend", "measurements", "contract")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("contract directory not found: %v", err)
	}
	return dir
}

func compileSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	compiler := jsonschema.NewCompiler()
	compiler.AssertFormat()
	schema, err := compiler.Compile(filepath.Join(contractDir(t), "result-batch.v1.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	return schema
}

func validate(t *testing.T, schema *jsonschema.Schema, data []byte) error {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return schema.Validate(doc)
}

func TestValidExamplesRoundTripThroughTheGoTypes(t *testing.T) {
	schema := compileSchema(t)
	files, _ := filepath.Glob(filepath.Join(contractDir(t), "examples", "valid", "*.json"))
	if len(files) < 4 {
		t.Fatalf("only %d valid examples", len(files))
	}
	for _, file := range files {
		data, _ := os.ReadFile(file)
		decoder := json.NewDecoder(bytes.NewReader(data))
		decoder.DisallowUnknownFields()
		var batch result.Batch
		if err := decoder.Decode(&batch); err != nil {
			t.Fatalf("%s does not fit the Go types: %v", filepath.Base(file), err)
		}
		encoded, _ := json.Marshal(batch)
		if err := validate(t, schema, encoded); err != nil {
			t.Fatalf("%s re-encoded breaks the schema: %v", filepath.Base(file), err)
		}
	}
}

func TestInvalidExamplesFailTheSchema(t *testing.T) {
	schema := compileSchema(t)
	files, _ := filepath.Glob(filepath.Join(contractDir(t), "examples", "invalid", "*.json"))
	if len(files) < 10 {
		t.Fatalf("only %d invalid examples", len(files))
	}
	for _, file := range files {
		data, _ := os.ReadFile(file)
		var example struct {
			Expect string          `json:"_expect_error_contains"`
			Batch  json.RawMessage `json:"batch"`
		}
		if err := json.Unmarshal(data, &example); err != nil {
			t.Fatal(err)
		}
		err := validate(t, schema, example.Batch)
		if err == nil {
			t.Fatalf("%s passed the schema", filepath.Base(file))
		}
		if !strings.Contains(err.Error(), example.Expect) {
			t.Fatalf("%s: error does not name %q: %v", filepath.Base(file), example.Expect, err)
		}
	}
}

func TestProbeResultsFromRealOutputsFitTheSchema(t *testing.T) {
	schema := compileSchema(t)
	outputs, _ := filepath.Glob(filepath.Join("..", "probe", "ping", "testdata", "*.txt"))
	start := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	for _, file := range outputs {
		data, _ := os.ReadFile(file)
		parsed := ping.Parse(data, ping.Run{Start: start, Interval: time.Second})
		r := result.New("ping", "ping:x", "v", "198.18.1.2", "0b7e4c1d-2f3a-4b5c-8d9e-0a1b2c3d4e5f", start)
		r.EndedAt = start.Add(5 * time.Second)
		if parsed.Summary {
			r.Ping = &result.Ping{Count: max(parsed.Transmitted, 1), IntervalS: 1, SizeBytes: 56,
				Transmitted: parsed.Transmitted, Received: parsed.Received, Duplicates: parsed.Duplicates,
				Errors: parsed.Errors, Samples: parsed.Samples}
		} else {
			r.Fail("ping: " + parsed.Fatal)
		}
		encoded, _ := json.Marshal(result.Batch{SchemaVersion: result.SchemaVersion, Results: []result.Result{r}})
		if err := validate(t, schema, encoded); err != nil {
			t.Fatalf("%s: %v\n%s", filepath.Base(file), err, encoded)
		}
	}
}
