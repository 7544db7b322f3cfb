package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// node0012 is a row of nodes as migration 12 creates it: one running `switchboard
// serve`, its settings' fingerprint and its last heartbeat.
type node0012 struct {
	ID          string    `gorm:"primaryKey;size:64"`
	Fingerprint string    `gorm:"size:64;not null"`
	Settings    string    `gorm:"type:text;not null"`
	Version     string    `gorm:"size:100;not null"`
	StartedAt   time.Time `gorm:"not null"`
	HeartbeatAt time.Time `gorm:"not null;index"`
}

func (node0012) TableName() string { return "nodes" }

// up0012Nodes creates nodes, where every node says what settings it runs with, so each
// can tell (on /readyz) when its own differ from its peers'.
func up0012Nodes(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&node0012{}); err != nil {
		return fmt.Errorf("create nodes: %w", err)
	}
	return nil
}
