package airtable

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// ListRecords lists a table's records, optionally filtered, sorted or through a view.
// Airtable API docs: https://airtable.com/developers/web/api/list-records
var ListRecords = &providers.Operation[ListRecordsInput, ListRecordsOutput]{
	Name:  "list_records",
	Title: "List records",
	Description: "List or search the records (rows) of one Airtable table. Narrow them with filter_by_formula (an Airtable " +
		"formula, e.g. {Status}='Done'), a view (its filters and order apply), sort and fields; use get_record when " +
		"you already have a record ID. Returns each record's ID, creation time and cell values by field name, and " +
		"next_cursor when there are more.",
	DocsURL: "https://airtable.com/developers/web/api/list-records",
	Scopes:  []string{"data.records:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     listRecords,
}

// ListRecordsInput is the input of list_records.
type ListRecordsInput struct {
	BaseID          string   `json:"base_id" jsonschema:"The base's ID (app…), from list_bases" schema:"example=appLkNDICXNqxSDhG,pattern=^app[A-Za-z0-9]{14}$"`
	Table           string   `json:"table" jsonschema:"The table's ID (tbl…) or name, from get_base_schema" schema:"minLength=1,example=Tasks"`
	FilterByFormula *string  `json:"filter_by_formula,omitempty" jsonschema:"Only records for which this Airtable formula is true; field names in braces, text in single quotes" schema:"minLength=1,example={Status}='Done'"`
	View            *string  `json:"view,omitempty" jsonschema:"A view's name or ID: only its records, in its order" schema:"minLength=1,example=Grid view"`
	Sort            []Sort   `json:"sort,omitempty" jsonschema:"Order of the records, first key first; overrides the view's order" schema:"maxItems=10"`
	Fields          []string `json:"fields,omitempty" jsonschema:"Only these fields (by name or ID) in each record; all fields when omitted" schema:"example=Name|Status"`
	providers.PageInput
}

// Sort is one sort key of list_records.
type Sort struct {
	Field     string  `json:"field" jsonschema:"The field's name or ID" schema:"minLength=1,example=Due date"`
	Direction *string `json:"direction,omitempty" jsonschema:"asc (smallest, oldest or A first) or desc" schema:"enum=asc|desc,default=asc"`
}

// ListRecordsOutput is the output of list_records.
type ListRecordsOutput struct {
	Records    []Record `json:"records" jsonschema:"The records of this page"`
	NextCursor string   `json:"next_cursor,omitempty" jsonschema:"Pass as cursor, with the same arguments, to fetch the next page; absent on the last page"`
}

func listRecords(ctx context.Context, c *providers.Call, in ListRecordsInput) (ListRecordsOutput, error) {
	path, err := tablePath(in.BaseID, in.Table)
	if err != nil {
		return ListRecordsOutput{}, err
	}
	size := in.LimitOr(defaultPageSize)
	if size < 1 || size > maxPageSize {
		return ListRecordsOutput{}, switchboard.Invalid("limit", fmt.Sprintf("must be between 1 and %d", maxPageSize))
	}
	offset, err := in.DecodedCursor()
	if err != nil {
		return ListRecordsOutput{}, err
	}
	q := url.Values{"pageSize": {strconv.Itoa(size)}}
	if offset != "" {
		q.Set("offset", offset)
	}
	if in.FilterByFormula != nil {
		q.Set("filterByFormula", *in.FilterByFormula)
	}
	if in.View != nil {
		q.Set("view", *in.View)
	}
	for i, s := range in.Sort {
		q.Set(fmt.Sprintf("sort[%d][field]", i), s.Field)
		if s.Direction != nil {
			q.Set(fmt.Sprintf("sort[%d][direction]", i), *s.Direction)
		}
	}
	for _, f := range in.Fields {
		q.Add("fields[]", f)
	}
	var resp struct {
		Records []recordObject `json:"records"`
		Offset  string         `json:"offset"`
	}
	if err := (request{method: http.MethodGet, path: path, query: q}).do(ctx, c, &resp); err != nil {
		return ListRecordsOutput{}, err
	}
	return ListRecordsOutput{Records: toRecords(resp.Records), NextCursor: providers.EncodeCursor(resp.Offset)}, nil
}

// GetRecord reads one record.
// Airtable API docs: https://airtable.com/developers/web/api/get-record
var GetRecord = &providers.Operation[GetRecordInput, Record]{
	Name:  "get_record",
	Title: "Get record",
	Description: "Read one Airtable record by its ID (rec…), e.g. one a linked-record field or list_records pointed to. " +
		"Use list_records to find records by their values. Returns the record's ID, creation time and every " +
		"non-empty cell value by field name.",
	DocsURL: "https://airtable.com/developers/web/api/get-record",
	Scopes:  []string{"data.records:read"},
	Hints:   providers.Hints{ReadOnly: true, Idempotent: true},
	Run:     getRecord,
}

// GetRecordInput is the input of get_record.
type GetRecordInput struct {
	BaseID   string `json:"base_id" jsonschema:"The base's ID (app…), from list_bases" schema:"example=appLkNDICXNqxSDhG,pattern=^app[A-Za-z0-9]{14}$"`
	Table    string `json:"table" jsonschema:"The table's ID (tbl…) or name, from get_base_schema" schema:"minLength=1,example=Tasks"`
	RecordID string `json:"record_id" jsonschema:"The record's ID (rec…)" schema:"example=rec560UJdUtocSouk,pattern=^rec[A-Za-z0-9]{14}$"`
}

func getRecord(ctx context.Context, c *providers.Call, in GetRecordInput) (Record, error) {
	path, err := tablePath(in.BaseID, in.Table)
	if err != nil {
		return Record{}, err
	}
	if err := checkRecordID("record_id", in.RecordID); err != nil {
		return Record{}, err
	}
	var r recordObject
	if err := (request{method: http.MethodGet, path: path + "/" + in.RecordID}).do(ctx, c, &r); err != nil {
		return Record{}, err
	}
	return r.toRecord(), nil
}
