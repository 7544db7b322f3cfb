package migrations

import (
	"fmt"

	"gorm.io/gorm"
)

// usageHourly0031 is migration 0031's frozen copy of the table it creates. Never edit it.
type usageHourly0031 struct {
	TenantID     string     `gorm:"primaryKey;size:40"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Hour         int64      `gorm:"primaryKey;autoIncrement:false"`
	Principal    string     `gorm:"primaryKey;size:64"`
	ConnectionID string     `gorm:"primaryKey;size:40"`
	Tool         string     `gorm:"primaryKey;size:64"`
	Calls        int64      `gorm:"not null"`
	Errors       int64      `gorm:"not null"`
	Timed        int64      `gorm:"not null"`
	LatencySum   int64      `gorm:"not null"`
	B00          int64      `gorm:"not null"`
	B01          int64      `gorm:"not null"`
	B02          int64      `gorm:"not null"`
	B03          int64      `gorm:"not null"`
	B04          int64      `gorm:"not null"`
	B05          int64      `gorm:"not null"`
	B06          int64      `gorm:"not null"`
	B07          int64      `gorm:"not null"`
	B08          int64      `gorm:"not null"`
	B09          int64      `gorm:"not null"`
	B10          int64      `gorm:"not null"`
	B11          int64      `gorm:"not null"`
	B12          int64      `gorm:"not null"`
	B13          int64      `gorm:"not null"`
}

func (usageHourly0031) TableName() string { return "usage_hourly" }

// usageDaily0031 is migration 0031's frozen copy of the days' table. Never edit it.
type usageDaily0031 struct {
	TenantID     string     `gorm:"primaryKey;size:40"`
	Tenant       tenant0001 `gorm:"foreignKey:TenantID;constraint:OnDelete:CASCADE"`
	Day          int64      `gorm:"primaryKey;autoIncrement:false"`
	Principal    string     `gorm:"primaryKey;size:64"`
	ConnectionID string     `gorm:"primaryKey;size:40"`
	Tool         string     `gorm:"primaryKey;size:64"`
	Calls        int64      `gorm:"not null"`
	Errors       int64      `gorm:"not null"`
	Timed        int64      `gorm:"not null"`
	LatencySum   int64      `gorm:"not null"`
	B00          int64      `gorm:"not null"`
	B01          int64      `gorm:"not null"`
	B02          int64      `gorm:"not null"`
	B03          int64      `gorm:"not null"`
	B04          int64      `gorm:"not null"`
	B05          int64      `gorm:"not null"`
	B06          int64      `gorm:"not null"`
	B07          int64      `gorm:"not null"`
	B08          int64      `gorm:"not null"`
	B09          int64      `gorm:"not null"`
	B10          int64      `gorm:"not null"`
	B11          int64      `gorm:"not null"`
	B12          int64      `gorm:"not null"`
	B13          int64      `gorm:"not null"`
}

func (usageDaily0031) TableName() string { return "usage_daily" }

// usageRollup0031 is migration 0031's frozen copy of the rollup's watermark. Never edit it.
type usageRollup0031 struct {
	Name    string `gorm:"primaryKey;size:32"`
	Settled int64  `gorm:"not null"`
}

func (usageRollup0031) TableName() string { return "usage_rollup" }

// up0031UsageHourly creates usage_hourly, the tool calls of each hour per tenant,
// principal, connection and tool (counts, errors and a latency histogram of fixed
// buckets), which the usage pictures read instead of the audit log; usage_daily, the
// same per day (UTC), summed from the hours, which the figures of 7 and 30 days read;
// and usage_rollup, the watermark of the job that fills them. Indexes serve the
// per-agent and per-connection figures.
func up0031UsageHourly(tx *gorm.DB) error {
	for _, model := range []any{&usageHourly0031{}, &usageDaily0031{}, &usageRollup0031{}} {
		if err := tx.Migrator().CreateTable(model); err != nil {
			return fmt.Errorf("create table for %T: %w", model, err)
		}
	}
	for _, stmt := range []string{
		`CREATE INDEX idx_usage_hourly_principal ON usage_hourly (tenant_id, principal, hour)`,
		`CREATE INDEX idx_usage_hourly_connection ON usage_hourly (tenant_id, connection_id, hour)`,
		`CREATE INDEX idx_usage_daily_principal ON usage_daily (tenant_id, principal, day)`,
		`CREATE INDEX idx_usage_daily_connection ON usage_daily (tenant_id, connection_id, day)`,
	} {
		if err := tx.Exec(stmt).Error; err != nil {
			return fmt.Errorf("index the usage tables: %w", err)
		}
	}
	return nil
}
