//go:build !conformancefixture

package main

import (
	"github.com/switchboard-hub/switchboard/mcpadapter"
	"github.com/switchboard-hub/switchboard/providers"
)

// fixtureSpecs are the providers a test build adds to the registry: none in the
// product (see fixtures_conformance.go).
func fixtureSpecs() []providers.Spec { return nil }

// fixtureExtensions are the MCP adapter extensions a test build adds: none in the
// product.
func fixtureExtensions() []mcpadapter.Extension { return nil }

// wireFixtures gives a test build's fixtures the adapter: nothing in the product.
func wireFixtures(*mcpadapter.Adapter) {}
