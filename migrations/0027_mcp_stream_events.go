package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// mcpStreamEvent0027 is the frozen shape of one event of a call's SSE stream kept for
// its resumption on any node: its id (unique in the fleet), the session and stream it
// belongs to, its place in the stream, its message sealed (empty for a priming event
// and for the mark that ends the stream), and when it was kept, for pruning.
type mcpStreamEvent0027 struct {
	ID            string    `gorm:"primaryKey;size:128"`
	TenantID      string    `gorm:"size:64;not null;index:idx_mcp_stream_events_stream,priority:1"`
	SessionID     string    `gorm:"size:64;not null;index:idx_mcp_stream_events_stream,priority:2"`
	Stream        string    `gorm:"size:128;not null;index:idx_mcp_stream_events_stream,priority:3"`
	Seq           int       `gorm:"not null;index:idx_mcp_stream_events_stream,priority:4"`
	MessageSealed []byte    `gorm:""`
	MessageKeyID  string    `gorm:"size:128;not null;default:''"`
	MessageBytes  int       `gorm:"not null;default:0"`
	Last          bool      `gorm:"not null;default:false"`
	CreatedAt     time.Time `gorm:"not null;index:idx_mcp_stream_events_created"`
}

func (mcpStreamEvent0027) TableName() string { return "mcp_stream_events" }

// up0027MCPStreamEvents creates mcp_stream_events: the stream of a call whose client
// left before its answer is kept where every node reads it, so Last-Event-ID resumes
// it on any node, the node that ran the call gone or not.
func up0027MCPStreamEvents(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&mcpStreamEvent0027{}); err != nil {
		return fmt.Errorf("create mcp_stream_events: %w", err)
	}
	return nil
}
