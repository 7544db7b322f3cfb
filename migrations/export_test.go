package migrations

import (
	"context"

	"gorm.io/gorm"
)

// RunTo applies the pending migrations up to and including version, for tests of
// what a migration does to rows written before it.
func RunTo(ctx context.Context, db *gorm.DB, version int) error {
	for _, m := range all() {
		if m.Version > version {
			break
		}
		if err := apply(ctx, db, m); err != nil {
			return err
		}
	}
	return nil
}
