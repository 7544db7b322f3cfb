package notion

import (
	"encoding/json"
	"strconv"
	"strings"
)

// Page is a Notion page as the tools return it: its identity, its title, every
// property rendered as text, and the properties as Notion sent them.
type Page struct {
	ID             string            `json:"id" jsonschema:"Page ID (a UUID); pass it to get_page, update_page, get_block_children or append_block_children"`
	URL            string            `json:"url" jsonschema:"The page's address in Notion"`
	Title          string            `json:"title" jsonschema:"The page's title as plain text"`
	Parent         Parent            `json:"parent" jsonschema:"Where the page lives"`
	Archived       bool              `json:"archived" jsonschema:"Whether the page is archived (in the trash)"`
	CreatedTime    string            `json:"created_time" jsonschema:"When the page was created (RFC 3339)"`
	LastEditedTime string            `json:"last_edited_time" jsonschema:"When the page was last edited (RFC 3339)"`
	Values         map[string]string `json:"values" jsonschema:"Each property's value as plain text, by property name (dates as start → end, multi-selects and people comma-separated)"`
	Properties     map[string]any    `json:"properties" jsonschema:"The page's properties as Notion returns them (typed property values), by property name"`
}

// pageObject is a page as Notion returns it.
// https://developers.notion.com/reference/page
type pageObject struct {
	Object         string                     `json:"object"`
	ID             string                     `json:"id"`
	URL            string                     `json:"url"`
	Parent         parentRef                  `json:"parent"`
	Archived       bool                       `json:"archived"`
	CreatedTime    string                     `json:"created_time"`
	LastEditedTime string                     `json:"last_edited_time"`
	Properties     map[string]json.RawMessage `json:"properties"`
}

// toPage renders a page for the tools.
func (p pageObject) toPage() Page {
	out := Page{ID: p.ID, URL: p.URL, Parent: p.Parent.toParent(), Archived: p.Archived, CreatedTime: p.CreatedTime,
		LastEditedTime: p.LastEditedTime, Values: map[string]string{}, Properties: map[string]any{}}
	for name, raw := range p.Properties {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			out.Properties[name] = v
		}
		var pv propertyValue
		if json.Unmarshal(raw, &pv) != nil {
			continue
		}
		out.Values[name] = pv.text()
		if pv.Type == "title" {
			out.Title = pv.text()
		}
	}
	return out
}

// propertyValue is a page property value, with the fields of the types rendered as text.
// https://developers.notion.com/reference/page-property-values
type propertyValue struct {
	Type           string                `json:"type"`
	Title          []richText            `json:"title"`
	RichText       []richText            `json:"rich_text"`
	Number         *float64              `json:"number"`
	Select         *namedOption          `json:"select"`
	Status         *namedOption          `json:"status"`
	MultiSelect    []namedOption         `json:"multi_select"`
	Date           *dateValue            `json:"date"`
	Checkbox       bool                  `json:"checkbox"`
	URL            *string               `json:"url"`
	Email          *string               `json:"email"`
	PhoneNumber    *string               `json:"phone_number"`
	People         []personRef           `json:"people"`
	Relation       []struct{ ID string } `json:"relation"`
	CreatedTime    string                `json:"created_time"`
	LastEditedTime string                `json:"last_edited_time"`
	UniqueID       *struct {
		Prefix *string `json:"prefix"`
		Number int     `json:"number"`
	} `json:"unique_id"`
	Formula *struct {
		Type    string     `json:"type"`
		String  *string    `json:"string"`
		Number  *float64   `json:"number"`
		Boolean *bool      `json:"boolean"`
		Date    *dateValue `json:"date"`
	} `json:"formula"`
}

type namedOption struct {
	Name string `json:"name"`
}

type dateValue struct {
	Start string  `json:"start"`
	End   *string `json:"end"`
}

func (d *dateValue) text() string {
	if d == nil {
		return ""
	}
	if d.End != nil && *d.End != "" {
		return d.Start + " → " + *d.End
	}
	return d.Start
}

type personRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// text renders the value as plain text; types it does not know render as "".
func (v propertyValue) text() string {
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	num := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'f', -1, 64)
	}
	switch v.Type {
	case "title":
		return plain(v.Title)
	case "rich_text":
		return plain(v.RichText)
	case "number":
		return num(v.Number)
	case "select":
		if v.Select != nil {
			return v.Select.Name
		}
	case "status":
		if v.Status != nil {
			return v.Status.Name
		}
	case "multi_select":
		names := make([]string, 0, len(v.MultiSelect))
		for _, o := range v.MultiSelect {
			names = append(names, o.Name)
		}
		return strings.Join(names, ", ")
	case "date":
		return v.Date.text()
	case "checkbox":
		return strconv.FormatBool(v.Checkbox)
	case "url":
		return str(v.URL)
	case "email":
		return str(v.Email)
	case "phone_number":
		return str(v.PhoneNumber)
	case "people":
		names := make([]string, 0, len(v.People))
		for _, p := range v.People {
			if p.Name != "" {
				names = append(names, p.Name)
			} else {
				names = append(names, p.ID)
			}
		}
		return strings.Join(names, ", ")
	case "relation":
		ids := make([]string, 0, len(v.Relation))
		for _, r := range v.Relation {
			ids = append(ids, r.ID)
		}
		return strings.Join(ids, ", ")
	case "created_time":
		return v.CreatedTime
	case "last_edited_time":
		return v.LastEditedTime
	case "unique_id":
		if v.UniqueID != nil {
			n := strconv.Itoa(v.UniqueID.Number)
			if p := str(v.UniqueID.Prefix); p != "" {
				return p + "-" + n
			}
			return n
		}
	case "formula":
		if f := v.Formula; f != nil {
			switch f.Type {
			case "string":
				return str(f.String)
			case "number":
				return num(f.Number)
			case "boolean":
				if f.Boolean != nil {
					return strconv.FormatBool(*f.Boolean)
				}
			case "date":
				return f.Date.text()
			}
		}
	}
	return ""
}
