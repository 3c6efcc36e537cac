package mpk_test

import (
	"testing"

	"github.com/megaproof/megaproof/internal/jsontest"
	"github.com/megaproof/megaproof/schedule/mpk"
)

// An MPK graph whose keys and strings are all escapes is detected and
// mapped to the same program as the plain one.
func TestEscapedDocuments(t *testing.T) {
	jsontest.SameWhenEscaped(t, "testdata/*.json", jsontest.Reader{Detect: mpk.Detect, Unmarshal: mpk.Unmarshal})
}
