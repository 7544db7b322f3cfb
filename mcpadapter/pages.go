package mcpadapter

// DefaultListPageSize is how many tools, prompts or resources one list answer holds
// unless configured. Measured with two large imported descriptions, Stripe's and
// GitHub's REST API (1,675 tools, 3 MB listed): the heaviest run of 200 consecutive
// tools in list order takes 708 KB (100: 449 KB; 400: 999 KB), under three quarters
// of 1 MB (TestListPagesFit), so every page stays under 1 MB. A tenant of every
// built-in provider (125 tools and the hub's own) still fits in one page.
const DefaultListPageSize = 200

// DefaultToolBudget is the most hub tools a tenant URL lists by default before it
// serves them through search instead: past it, a list no longer fits what models take
// in and choose from well.
const DefaultToolBudget = 128
