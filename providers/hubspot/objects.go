package hubspot

import (
	"regexp"
	"slices"

	"github.com/switchboard-hub/switchboard"
	"github.com/switchboard-hub/switchboard/providers"
)

// kind is one CRM object type the tools work on.
type kind struct {
	plural   string // the API's object type: contacts
	singular string // contact
	typeID   string // HubSpot's object type ID, used in record URLs: 0-1
	// props are the properties the tools ask for when the caller names none: what a
	// person reads first on the record.
	props      []string
	readScope  string
	writeScope string
	// search is what HubSpot's full-text query matches for this type.
	search string
	// example is a property map for the create description.
	example string
}

// The kinds of record.
var (
	contacts = kind{plural: "contacts", singular: "contact", typeID: "0-1",
		props:     []string{"email", "firstname", "lastname", "phone", "company", "jobtitle", "lifecyclestage", "hubspot_owner_id"},
		readScope: "crm.objects.contacts.read", writeScope: "crm.objects.contacts.write",
		search:  "name, email, phone and company name",
		example: `{"email": "ada@example.com", "firstname": "Ada", "lastname": "Lovelace", "lifecyclestage": "lead"}`}
	companies = kind{plural: "companies", singular: "company", typeID: "0-2",
		props:     []string{"name", "domain", "industry", "city", "country", "phone", "lifecyclestage", "hubspot_owner_id"},
		readScope: "crm.objects.companies.read", writeScope: "crm.objects.companies.write",
		search:  "name, domain and website",
		example: `{"name": "Analytical Engines Ltd", "domain": "engines.example.com", "industry": "COMPUTER_SOFTWARE"}`}
	deals = kind{plural: "deals", singular: "deal", typeID: "0-3",
		props:     []string{"dealname", "amount", "dealstage", "pipeline", "closedate", "hubspot_owner_id"},
		readScope: "crm.objects.deals.read", writeScope: "crm.objects.deals.write",
		search:  "deal name",
		example: `{"dealname": "Engines renewal", "amount": "12000", "pipeline": "default", "dealstage": "appointmentscheduled", "closedate": "2026-12-31"}`}
)

// kindNamed returns the kind of an object type name.
func kindNamed(name string) (kind, bool) {
	for _, k := range []kind{contacts, companies, deals} {
		if k.plural == name {
			return k, true
		}
	}
	return kind{}, false
}

// Record is one CRM record (contact, company or deal) as the tools return it.
type Record struct {
	ID           string              `json:"id" jsonschema:"The record's ID; pass it to the get_, update_ and create_note tools"`
	Properties   map[string]string   `json:"properties" jsonschema:"The record's property values by internal name (empty values left out); numbers and dates are strings as HubSpot sends them"`
	CreatedAt    string              `json:"created_at" jsonschema:"When the record was created (RFC 3339)"`
	UpdatedAt    string              `json:"updated_at" jsonschema:"When the record last changed (RFC 3339)"`
	Archived     bool                `json:"archived" jsonschema:"Whether the record is archived (deleted, restorable for 90 days)"`
	URL          string              `json:"url,omitempty" jsonschema:"The record's page in HubSpot"`
	Associations map[string][]string `json:"associations,omitempty" jsonschema:"IDs of associated records by object type (contacts, companies, deals), when asked for"`
}

// recordObject is a record as HubSpot returns it.
// https://developers.hubspot.com/docs/api/crm/contacts
type recordObject struct {
	ID           string             `json:"id"`
	Properties   map[string]*string `json:"properties"`
	CreatedAt    string             `json:"createdAt"`
	UpdatedAt    string             `json:"updatedAt"`
	Archived     bool               `json:"archived"`
	Associations map[string]struct {
		Results []struct {
			ID   string `json:"id"`
			Type string `json:"type"`
		} `json:"results"`
	} `json:"associations"`
}

// uiDomainPattern is a HubSpot app host, so a record URL can point nowhere else.
var uiDomainPattern = regexp.MustCompile(`^app(-[a-z0-9]+)?\.hubspot\.com$`)

// toRecord renders a record for the tools; meta is the connection's Account.Meta,
// which holds the portal the record URL needs.
func (r recordObject) toRecord(k kind, meta map[string]string) Record {
	out := Record{ID: r.ID, Properties: map[string]string{}, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, Archived: r.Archived}
	for name, v := range r.Properties {
		if v != nil && *v != "" {
			out.Properties[name] = *v
		}
	}
	if portal, host := meta[metaPortalID], meta[metaUIDomain]; portal != "" && r.ID != "" {
		if !uiDomainPattern.MatchString(host) {
			host = "app.hubspot.com"
		}
		out.URL = "https://" + host + "/contacts/" + portal + "/record/" + k.typeID + "/" + r.ID
	}
	for typ, a := range r.Associations {
		ids := []string{}
		for _, res := range a.Results {
			if res.ID != "" && !slices.Contains(ids, res.ID) {
				ids = append(ids, res.ID)
			}
		}
		if out.Associations == nil {
			out.Associations = map[string][]string{}
		}
		out.Associations[typ] = ids
	}
	return out
}

// idPattern is a HubSpot record ID.
var idPattern = regexp.MustCompile(`^[0-9]{1,20}$`)

// checkID refuses anything but a numeric record ID.
func checkID(field, id string) error {
	if !idPattern.MatchString(id) {
		return switchboard.Invalid(field, "must be a HubSpot record ID (digits only, e.g. 51); the search tools find them")
	}
	return nil
}

// propertyList returns the properties to ask for: those given, or the kind's defaults.
func propertyList(k kind, given []string) ([]string, error) {
	if len(given) == 0 {
		return slices.Clone(k.props), nil
	}
	for i, p := range given {
		if !propertyName.MatchString(p) {
			return nil, switchboard.Invalid("properties", "entry "+itoa(i)+" is not a property's internal name (lower case letters, digits and underscores, e.g. lifecyclestage)")
		}
	}
	return slices.Clone(given), nil
}

// propertyName is a property's internal name.
var propertyName = regexp.MustCompile(`^[A-Za-z0-9_]{1,100}$`)

// pageSize bounds: the hub's default and HubSpot's maximum for one page.
const (
	defaultPageSize = 30
	maxPageSize     = 100
)

// pageParams reads the hub's page input as HubSpot's after and limit.
func pageParams(p providers.PageInput) (after string, limit int, err error) {
	limit = p.LimitOr(defaultPageSize)
	if limit < 1 || limit > maxPageSize {
		return "", 0, switchboard.Invalid("limit", "must be between 1 and "+itoa(maxPageSize))
	}
	after, err = p.DecodedCursor()
	return after, limit, err
}

// paging is HubSpot's paging object.
type paging struct {
	Next *struct {
		After string `json:"after"`
	} `json:"next"`
}

// next returns the opaque next_cursor, "" on the last page.
func (p *paging) next() string {
	if p == nil || p.Next == nil {
		return ""
	}
	return providers.EncodeCursor(p.Next.After)
}
