package mcpadapter

// DefaultListPageSize is how many tools, prompts or resources one list answer holds
// unless configured. Measured with two large imported descriptions, Stripe's and
// GitHub's REST API (1,675 tools, 3 MB listed): the heaviest run of 100 consecutive
// tools in list order takes 449 KB, under half of 1 MB (TestListPagesFit), so every
// page stays under 1 MB with room for larger schemas.
const DefaultListPageSize = 100

// DefaultToolBudget is the most hub tools a tenant URL lists by default before it
// serves them through search instead: past it, a list no longer fits what models take
// in and choose from well.
const DefaultToolBudget = 128
