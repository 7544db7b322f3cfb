package airtable

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// maxBatch is the most records Airtable takes in one create, update or delete.
const maxBatch = 10

// CreateRecords creates up to ten records in a table.
// Airtable API docs: https://airtable.com/developers/web/api/create-records
var CreateRecords = &providers.Operation[CreateRecordsInput, RecordsOutput]{
	Name:  "create_records",
	Title: "Create records",
	Description: "Add new records (rows) to an Airtable table, up to 10 per call, each given as its cell values by field " +
		"name (get_base_schema lists the fields and the values they take). Set typecast to let Airtable convert text " +
		"into select options, dates and linked records. Each call adds new records: do not retry one that " +
		"succeeded. Returns the created records with their new IDs.",
	DocsURL: "https://airtable.com/developers/web/api/create-records",
	Scopes:  []string{"data.records:write"},
	Hints:   providers.Hints{},
	Run:     createRecords,
}

// CreateRecordsInput is the input of create_records.
type CreateRecordsInput struct {
	BaseID   string      `json:"base_id" jsonschema:"The base's ID (app…), from list_bases" schema:"example=appLkNDICXNqxSDhG,pattern=^app[A-Za-z0-9]{14}$"`
	Table    string      `json:"table" jsonschema:"The table's ID (tbl…) or name, from get_base_schema" schema:"minLength=1,example=Tasks"`
	Records  []NewRecord `json:"records" jsonschema:"The records to create, at most 10" schema:"minItems=1,maxItems=10"`
	Typecast *bool       `json:"typecast,omitempty" jsonschema:"Let Airtable convert values to the field types (text to select options, dates, linked records by name)" schema:"default=false"`
}

// NewRecord is one record to create.
type NewRecord struct {
	Fields map[string]any `json:"fields" jsonschema:"Cell values by field name, e.g. {\"Name\": \"Call Ada\", \"Status\": \"Todo\"}"`
}

// RecordsOutput is the output of create_records and update_records.
type RecordsOutput struct {
	Records []Record `json:"records" jsonschema:"The records as they are after the change"`
}

func createRecords(ctx context.Context, c *providers.Call, in CreateRecordsInput) (RecordsOutput, error) {
	path, err := tablePath(in.BaseID, in.Table)
	if err != nil {
		return RecordsOutput{}, err
	}
	if len(in.Records) == 0 || len(in.Records) > maxBatch {
		return RecordsOutput{}, switchboard.Invalid("records", fmt.Sprintf("give between 1 and %d records; split larger batches over several calls", maxBatch))
	}
	recs := make([]map[string]any, 0, len(in.Records))
	for i, r := range in.Records {
		if len(r.Fields) == 0 {
			return RecordsOutput{}, switchboard.Invalid(fmt.Sprintf("records.%d.fields", i), "is empty: give at least one field value")
		}
		recs = append(recs, map[string]any{"fields": r.Fields})
	}
	body := map[string]any{"records": recs}
	if in.Typecast != nil {
		body["typecast"] = *in.Typecast
	}
	var resp struct {
		Records []recordObject `json:"records"`
	}
	if err := (request{method: http.MethodPost, path: path, body: body}).do(ctx, c, &resp); err != nil {
		return RecordsOutput{}, err
	}
	return RecordsOutput{Records: toRecords(resp.Records)}, nil
}

// UpdateRecords changes some fields of up to ten records.
// Airtable API docs: https://airtable.com/developers/web/api/update-multiple-records
var UpdateRecords = &providers.Operation[UpdateRecordsInput, RecordsOutput]{
	Name:  "update_records",
	Title: "Update records",
	Description: "Change cell values of existing Airtable records, up to 10 per call: only the fields given are " +
		"overwritten (PATCH), the others keep their values; a null value clears a cell. Use create_records for new " +
		"rows. Returns the updated records with all their values.",
	DocsURL: "https://airtable.com/developers/web/api/update-multiple-records",
	Scopes:  []string{"data.records:write"},
	Hints:   providers.Hints{Destructive: true, Idempotent: true},
	Run:     updateRecords,
}

// UpdateRecordsInput is the input of update_records.
type UpdateRecordsInput struct {
	BaseID   string         `json:"base_id" jsonschema:"The base's ID (app…), from list_bases" schema:"example=appLkNDICXNqxSDhG,pattern=^app[A-Za-z0-9]{14}$"`
	Table    string         `json:"table" jsonschema:"The table's ID (tbl…) or name, from get_base_schema" schema:"minLength=1,example=Tasks"`
	Records  []RecordChange `json:"records" jsonschema:"The records to change, at most 10" schema:"minItems=1,maxItems=10"`
	Typecast *bool          `json:"typecast,omitempty" jsonschema:"Let Airtable convert values to the field types (text to select options, dates, linked records by name)" schema:"default=false"`
}

// RecordChange is one record to update.
type RecordChange struct {
	ID     string         `json:"id" jsonschema:"The record's ID (rec…)" schema:"example=rec560UJdUtocSouk,pattern=^rec[A-Za-z0-9]{14}$"`
	Fields map[string]any `json:"fields" jsonschema:"Cell values to overwrite by field name, e.g. {\"Status\": \"Done\"}; null clears a cell"`
}

func updateRecords(ctx context.Context, c *providers.Call, in UpdateRecordsInput) (RecordsOutput, error) {
	path, err := tablePath(in.BaseID, in.Table)
	if err != nil {
		return RecordsOutput{}, err
	}
	if len(in.Records) == 0 || len(in.Records) > maxBatch {
		return RecordsOutput{}, switchboard.Invalid("records", fmt.Sprintf("give between 1 and %d records; split larger batches over several calls", maxBatch))
	}
	recs := make([]map[string]any, 0, len(in.Records))
	for i, r := range in.Records {
		if err := checkRecordID(fmt.Sprintf("records.%d.id", i), r.ID); err != nil {
			return RecordsOutput{}, err
		}
		if len(r.Fields) == 0 {
			return RecordsOutput{}, switchboard.Invalid(fmt.Sprintf("records.%d.fields", i), "is empty: give at least one field to change")
		}
		recs = append(recs, map[string]any{"id": r.ID, "fields": r.Fields})
	}
	body := map[string]any{"records": recs}
	if in.Typecast != nil {
		body["typecast"] = *in.Typecast
	}
	var resp struct {
		Records []recordObject `json:"records"`
	}
	if err := (request{method: http.MethodPatch, path: path, body: body}).do(ctx, c, &resp); err != nil {
		return RecordsOutput{}, err
	}
	return RecordsOutput{Records: toRecords(resp.Records)}, nil
}

// DeleteRecords deletes up to ten records.
// Airtable API docs: https://airtable.com/developers/web/api/delete-multiple-records
var DeleteRecords = &providers.Operation[DeleteRecordsInput, DeleteRecordsOutput]{
	Name:  "delete_records",
	Title: "Delete records",
	Description: "Delete Airtable records by ID, up to 10 per call. This removes the rows and their values (they go to " +
		"the base's trash, restorable from the Airtable app for a limited time only); to change values use " +
		"update_records instead. Returns the ID of each deleted record.",
	DocsURL: "https://airtable.com/developers/web/api/delete-multiple-records",
	Scopes:  []string{"data.records:write"},
	Hints:   providers.Hints{Destructive: true},
	Run:     deleteRecords,
}

// DeleteRecordsInput is the input of delete_records.
type DeleteRecordsInput struct {
	BaseID    string   `json:"base_id" jsonschema:"The base's ID (app…), from list_bases" schema:"example=appLkNDICXNqxSDhG,pattern=^app[A-Za-z0-9]{14}$"`
	Table     string   `json:"table" jsonschema:"The table's ID (tbl…) or name, from get_base_schema" schema:"minLength=1,example=Tasks"`
	RecordIDs []string `json:"record_ids" jsonschema:"IDs (rec…) of the records to delete, at most 10" schema:"minItems=1,maxItems=10,example=rec560UJdUtocSouk"`
}

// DeleteRecordsOutput is the output of delete_records.
type DeleteRecordsOutput struct {
	Deleted []string `json:"deleted" jsonschema:"IDs of the records Airtable deleted"`
}

func deleteRecords(ctx context.Context, c *providers.Call, in DeleteRecordsInput) (DeleteRecordsOutput, error) {
	path, err := tablePath(in.BaseID, in.Table)
	if err != nil {
		return DeleteRecordsOutput{}, err
	}
	if len(in.RecordIDs) == 0 || len(in.RecordIDs) > maxBatch {
		return DeleteRecordsOutput{}, switchboard.Invalid("record_ids", fmt.Sprintf("give between 1 and %d record IDs; split larger batches over several calls", maxBatch))
	}
	q := url.Values{}
	for i, id := range in.RecordIDs {
		if err := checkRecordID(fmt.Sprintf("record_ids.%d", i), id); err != nil {
			return DeleteRecordsOutput{}, err
		}
		q.Add("records[]", id)
	}
	var resp struct {
		Records []struct {
			ID      string `json:"id"`
			Deleted bool   `json:"deleted"`
		} `json:"records"`
	}
	if err := (request{method: http.MethodDelete, path: path, query: q}).do(ctx, c, &resp); err != nil {
		return DeleteRecordsOutput{}, err
	}
	out := DeleteRecordsOutput{Deleted: []string{}}
	for _, r := range resp.Records {
		if r.Deleted {
			out.Deleted = append(out.Deleted, r.ID)
		}
	}
	return out, nil
}
