package records_test

import (
	"encoding/json"
	"testing"

	"github.com/loadlab/loadlab/client/records"
)

// Error kinds are keyed by dependency and kind, and written as results
// always wrote them: "dependency: kind".
func TestErrorKindsJSON(t *testing.T) {
	in := records.Result{ErrorKinds: map[records.ErrorKey]int{
		{Dependency: "records", Kind: records.StatusKind(500)}: 2,
		{Dependency: "geo", Kind: records.ConnRefused}:         1,
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	var raw struct {
		ErrorKinds map[string]int `json:"error_kinds"`
	}
	if err := json.Unmarshal(b, &raw); err != nil || raw.ErrorKinds["records: status 500"] != 2 || raw.ErrorKinds["geo: connection refused"] != 1 {
		t.Fatalf("written %s (%v)", b, err)
	}
	var out records.Result
	if err := json.Unmarshal(b, &out); err != nil || len(out.ErrorKinds) != 2 ||
		out.ErrorKinds[records.ErrorKey{Dependency: "records", Kind: records.StatusKind(500)}] != 2 {
		t.Fatalf("read back %+v (%v)", out.ErrorKinds, err)
	}
	if err := json.Unmarshal([]byte(`{"error_kinds":{"nodependency":1}}`), &out); err == nil {
		t.Error("a key without a dependency was read")
	}
}
