package jsontest

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// EscapeAll keeps the document: encoding/json reads both spellings alike,
// and no key or string byte is left unescaped.
func TestEscapeAll(t *testing.T) {
	doc := `{"b": [1, 2.5e3, -0, true, null, "x\"y"], "a": {"é𝄞": "tab\there"}, "": []}`
	got, err := EscapeAll([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var want, back any
	if err := json.Unmarshal([]byte(doc), &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if !reflect.DeepEqual(want, back) {
		t.Errorf("escaped %s reads as %v, want %v", got, back, want)
	}
	if strings.ContainsAny(string(got), "abxy") || !strings.Contains(string(got), `\ud834\udd1e`) {
		t.Errorf("escaped %s keeps plain letters or lacks the surrogate pair", got)
	}
	if _, err := EscapeAll([]byte(`{"a": `)); err == nil {
		t.Error("a truncated document was escaped")
	}
}
