package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// connectionRateLimit0028 is migration 0028's frozen copy of the columns it adds. Never
// edit it.
type connectionRateLimit0028 struct {
	RatePerSecond float64 `gorm:"not null;default:0"`
	RateBurst     int     `gorm:"not null;default:0"`
}

func (connectionRateLimit0028) TableName() string { return "connections" }

// up0028ConnectionRateLimits adds connections.rate_per_second and rate_burst: a tenant
// admin may give a connection its own rate limit in place of its provider's (0: the
// provider's, which every existing connection keeps).
func up0028ConnectionRateLimits(tx *gorm.DB) error {
	for _, col := range []string{"RatePerSecond", "RateBurst"} {
		if err := tx.Migrator().AddColumn(&connectionRateLimit0028{}, col); err != nil {
			return fmt.Errorf("add connections.%s: %w", col, err)
		}
	}
	return nil
}
