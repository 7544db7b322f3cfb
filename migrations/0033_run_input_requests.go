package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// runInputRequests0033 is migration 0033's frozen copy of the columns it adds. Never
// edit it.
type runInputRequests0033 struct {
	InputRequestsSealed []byte
	InputRequestsKeyID  string `gorm:"size:128;not null;default:''"`
}

func (runInputRequests0033) TableName() string { return "runs" }

// up0033RunInputRequests adds runs.input_requests_sealed and input_requests_key_id:
// the requests an MCP task's tool waits for its client to answer, sealed, recorded by
// the node executing it so that every node shows them.
func up0033RunInputRequests(tx *gorm.DB) error {
	for _, col := range []string{"InputRequestsSealed", "InputRequestsKeyID"} {
		if err := tx.Migrator().AddColumn(&runInputRequests0033{}, col); err != nil {
			return fmt.Errorf("add runs.%s: %w", col, err)
		}
	}
	return nil
}
