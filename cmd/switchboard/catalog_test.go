package main

import (
	"log/slog"
	"testing"
)

// TestRegistryCatalog: the registry serve builds holds the built-in catalog's APIs when
// the catalog is on, and none of them when it is off.
func TestRegistryCatalog(t *testing.T) {
	on, err := newRegistry(config{Catalog: true})
	if err != nil {
		t.Fatal(err)
	}
	if !on.Deferred("gmail") {
		t.Errorf("gmail is not deferred: the catalog's descriptions are read before the node is ready")
	}
	loadDeferred(on, slog.New(slog.DiscardHandler))
	catalogAPIs := 0
	for _, spec := range on.Providers() {
		if spec.Catalog {
			catalogAPIs++
		}
	}
	if spec, ok := on.Provider("gmail"); !ok || !spec.Catalog || catalogAPIs < 30 {
		t.Errorf("with the catalog on: gmail registered %v, %d catalog APIs; want gmail among at least 30", ok, catalogAPIs)
	}
	off, err := newRegistry(config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, spec := range off.Providers() {
		if spec.Catalog {
			t.Errorf("with the catalog off, %s is registered", spec.Name)
		}
	}
}
