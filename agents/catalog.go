package agents

// Catalog is which providers' tools an MCP endpoint offers: only those of providers
// the caller has connected, or also those of every provider the caller could connect
// with OAuth, whose call asks the person to connect first (a connect link).
type Catalog string

// The catalog settings. CatalogInherit is an agent's empty value (the tenant's
// setting) and a tenant's (connected).
const (
	CatalogInherit   Catalog = ""
	CatalogConnected Catalog = "connected"
	CatalogAll       Catalog = "all"
)

// EffectiveCatalog is the tenant's catalog setting: connected unless it set all.
func (s Settings) EffectiveCatalog() Catalog {
	if s.Catalog == CatalogInherit {
		return CatalogConnected
	}
	return s.Catalog
}

// EffectiveCatalog is the agent's catalog setting, or the tenant's when it has none.
func (a *Agent) EffectiveCatalog(s Settings) Catalog {
	if a.Catalog != CatalogInherit {
		return a.Catalog
	}
	return s.EffectiveCatalog()
}

func validCatalog(c Catalog) bool {
	return c == CatalogInherit || c == CatalogConnected || c == CatalogAll
}
