package migrations

import (
	"fmt"
	"time"

	"gorm.io/gorm"
)

// keyRotation0007 is a run of `switchboard keys rotate`: the key it re-seals under and
// how far it got. Active is 1 while the run is unfinished and NULL after, and its
// unique index lets at most one run be unfinished (both databases let NULLs repeat).
type keyRotation0007 struct {
	ID         string     `gorm:"primaryKey;size:40"`
	KeyID      string     `gorm:"size:128;not null"`
	Active     *int       `gorm:"uniqueIndex:idx_key_rotations_active"`
	StartedAt  time.Time  `gorm:"not null"`
	FinishedAt *time.Time ``
	Resealed   int64      `gorm:"not null"`
	Failed     int64      `gorm:"not null"`
}

func (keyRotation0007) TableName() string { return "key_rotations" }

// up0007KeyRotations creates key_rotations, so an interrupted key rotation resumes
// under the key it started with instead of rotating again.
func up0007KeyRotations(tx *gorm.DB) error {
	if err := tx.Migrator().CreateTable(&keyRotation0007{}); err != nil {
		return fmt.Errorf("create table key_rotations: %w", err)
	}
	return nil
}
