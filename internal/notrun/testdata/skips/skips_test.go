package skips

import (
	"testing"

	"github.com/switchboard-hub/switchboard/internal/notrun"
)

func TestMain(m *testing.M) { notrun.Main(m) }

func TestNeedsAThing(t *testing.T) { notrun.Skip(t, "needs a thing that is missing") }

func TestPartly(t *testing.T) { notrun.Note(t, "half of it (no database)") }

func TestRuns(t *testing.T) {}
