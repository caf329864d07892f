import {
  defineBuilder,
  pages,
  pick,
  SANDBOX_CITIES,
  SANDBOX_INDUSTRIES,
  SANDBOX_LAST,
  seededRandom,
  slugify,
  Type,
} from 'workflow-service/plugin-sdk';
import { Range, StringList, Text, activeFilters } from '../../_providers/apollo/apollo-filters.ts';
import { APOLLO_PROVIDER, apolloSearch } from '../../_providers/apollo/apollo-client.ts';

const COLUMNS = ['Name', 'Domain', 'Website', 'Industry', 'Employees', 'Location', 'Founded Year', 'LinkedIn URL'];
const MAX_RESULTS = 1000;

const YearField = (description: string) =>
  Type.Optional(Type.Union([Type.Integer({ minimum: 1800, maximum: 2100 }), Type.String({ pattern: '^(\\d{4})?$' })], { description }));

export const CompanyFilters = Type.Object(
  {
    q_organization_name: Text('Part of the company name.'),
    q_organization_keyword_tags: StringList('Industry or keyword tags, e.g. ["saas", "logistics"].'),
    organization_num_employees_ranges: StringList('Employee-count ranges as "min,max" strings, e.g. ["51,200"].'),
    organization_locations: StringList('Headquarters locations to include.'),
    organization_not_locations: StringList('Headquarters locations to exclude.'),
    q_organization_domains_list: StringList('Company domains, e.g. ["example.com"].'),
    organization_ids: StringList('Provider organization ids.'),
    revenue_range: Range('Revenue in USD.'),
    currently_using_any_of_technology_uids: StringList('Uses at least one of these technology UIDs.'),
    latest_funding_amount_range: Range('Latest funding round, USD.'),
    total_funding_range: Range('Total funding, USD.'),
    latest_funding_date_range: Range('Date range (YYYY-MM-DD) of the latest round.'),
    q_organization_job_titles: StringList('Titles in open job postings.'),
    organization_job_locations: StringList('Locations of open job postings.'),
    organization_num_jobs_range: Range('Number of open job postings.'),
    organization_job_posted_at_range: Range('Date range (YYYY-MM-DD) of job postings.'),
    founded_year_min: YearField('Founded in or after this year ("" for any).'),
    founded_year_max: YearField('Founded in or before this year ("" for any).'),
    publicly_traded: Type.Optional(
      Type.Union([Type.Boolean(), Type.Literal('')], { description: 'true or false to filter on listing; "" for any.' }),
    ),
  },
  { additionalProperties: false, description: 'Search filters; omit or leave empty the ones you do not need.' },
);

interface ApolloOrganization {
  name?: string;
  primary_domain?: string;
  website_url?: string;
  industry?: string;
  estimated_num_employees?: number;
  city?: string;
  country?: string;
  founded_year?: number;
  linkedin_url?: string;
}

export default defineBuilder({
  kind: 'builder',
  id: 'companies_search_builder',
  version: '1.0.0',
  name: 'Company search',
  summary: 'Finds companies by industry, size and location: one row per company.',
  description:
    'Finds companies by name, keywords, size, location, revenue, funding and technologies through an Apollo-compatible company search, one row per company. Filters nest under form_data.filters. Live mode needs APOLLO_API_KEY. Costs 1 credit per row.',
  category: 'companies',
  tags: ['companies', 'prospecting', 'apollo'],
  legacyIds: ['companies_search', 'company_search_builder'],
  input: Type.Object(
    {
      filters: CompanyFilters,
      max_results: Type.Integer({ minimum: 1, maximum: MAX_RESULTS, description: 'Rows to create, 1 to 1000.' }),
    },
    { additionalProperties: false },
  ),
  provider: APOLLO_PROVIDER,
  cost: { credits: 1, per: 'row' },
  maxRows: MAX_RESULTS,
  columns: () => COLUMNS,
  projectName: (form) =>
    `Companies: ${form.filters.q_organization_name || (form.filters.q_organization_keyword_tags ?? []).join(', ') || 'search'}`.slice(
      0,
      200,
    ),
  target: (form) => form.max_results,
  async *run(form, ctx) {
    const filters = activeFilters(form.filters);
    if (ctx.providerMode === 'sandbox') {
      const rand = seededRandom(`companies:${JSON.stringify(filters)}`);
      for (const [start, end] of pages(form.max_results, 100)) {
        const page = [];
        for (let i = start; i < end; i++) {
          const industry = pick(rand, SANDBOX_INDUSTRIES);
          const name = `${pick(rand, SANDBOX_LAST)} ${industry} ${i + 1}`;
          const domain = `${slugify(name)}.example.com`;
          page.push({
            Name: name,
            Domain: domain,
            Website: `https://${domain}`,
            Industry: industry,
            Employees: 5 + Math.floor(rand() * 2000),
            Location: pick(rand, SANDBOX_CITIES),
            'Founded Year': 1970 + Math.floor(rand() * 55),
            'LinkedIn URL': `https://linkedin.example.com/company/${slugify(name)}`,
          });
        }
        yield page;
      }
      return;
    }
    const path = '/api/v1/mixed_companies/search';
    for await (const orgs of apolloSearch<ApolloOrganization>(ctx, path, 'organizations', filters, form.max_results)) {
      yield orgs.map((o) => ({
        Name: o.name ?? null,
        Domain: o.primary_domain ?? null,
        Website: o.website_url ?? null,
        Industry: o.industry ?? null,
        Employees: o.estimated_num_employees ?? null,
        Location: [o.city, o.country].filter(Boolean).join(', ') || null,
        'Founded Year': o.founded_year ?? null,
        'LinkedIn URL': o.linkedin_url ?? null,
      }));
    }
  },
});
