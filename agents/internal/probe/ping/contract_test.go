package ping

import (
	"encoding/json"
	"testing"

	"github.com/fathom-net/fathom/agents/internal/contract"
)

// The ping options this agent decodes are the contract's, field for field, with the
// contract's defaults, bounds and enum values (contract/test-options/ping.v1.schema.json).
func TestOptionsMatchTheContract(t *testing.T) {
	contract.CheckOptions(t, TestType, defaultSpec(), func(raw json.RawMessage) error {
		_, err := DecodeSpec(raw)
		return err
	})
}
