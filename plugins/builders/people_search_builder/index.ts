import {
  defineBuilder,
  pages,
  pick,
  SANDBOX_CITIES,
  SANDBOX_FIRST,
  SANDBOX_LAST,
  seededRandom,
  slugify,
  Type,
} from 'workflow-service/plugin-sdk';
import { Range, StringList, Text, activeFilters } from '../../_providers/apollo/apollo-filters.ts';
import { APOLLO_PROVIDER, apolloSearch } from '../../_providers/apollo/apollo-client.ts';

const COLUMNS = ['First Name', 'Last Name', 'Full Name', 'Title', 'Seniority', 'LinkedIn URL', 'Location', 'Company', 'Company Domain'];
const MAX_RESULTS = 1000;

export const PeopleFilters = Type.Object(
  {
    person_titles: StringList('Job titles to match, e.g. ["head of sales"].'),
    include_similar_titles: Type.Optional(Type.Boolean({ description: 'Also match similar titles. Send only when needed.' })),
    person_locations: StringList('Where the people live: cities, states, countries.'),
    person_seniorities: StringList('Seniorities: owner, founder, c_suite, partner, vp, head, director, manager, senior, entry, intern.'),
    q_keywords: Text('Free-text keywords.'),
    organization_locations: StringList("Locations of the people's employers' headquarters."),
    q_organization_domains_list: StringList('Employer domains, e.g. ["example.com"].'),
    organization_ids: StringList('Provider organization ids.'),
    organization_num_employees_ranges: StringList('Employee-count ranges as "min,max" strings, e.g. ["11,50"].'),
    contact_email_status: StringList('Email statuses: verified, unverified, likely to engage, unavailable.'),
    revenue_range: Range('Employer revenue in USD.'),
    currently_using_all_of_technology_uids: StringList('Employer uses every one of these technology UIDs.'),
    currently_using_any_of_technology_uids: StringList('Employer uses at least one of these technology UIDs.'),
    currently_not_using_any_of_technology_uids: StringList('Employer uses none of these technology UIDs.'),
    q_organization_job_titles: StringList('Titles in the employer’s open job postings.'),
    organization_job_locations: StringList('Locations of the employer’s open job postings.'),
    organization_num_jobs_range: Range('Number of open job postings.'),
    organization_job_posted_at_range: Range('Date range (YYYY-MM-DD) of job postings.'),
  },
  { additionalProperties: false, description: 'Search filters; omit or leave empty the ones you do not need.' },
);

interface ApolloPerson {
  first_name?: string;
  last_name?: string;
  name?: string;
  title?: string;
  seniority?: string;
  linkedin_url?: string;
  city?: string;
  country?: string;
  organization?: { name?: string; primary_domain?: string };
}

export default defineBuilder({
  kind: 'builder',
  id: 'people_search_builder',
  version: '1.0.0',
  name: 'People search',
  summary: 'Finds people by job title, seniority and company: one row per person.',
  description:
    'Finds people by title, seniority, location, keywords and employer traits through an Apollo-compatible people search, one row per person. Filters nest under form_data.filters. Live mode needs APOLLO_API_KEY. Costs 1 credit per row.',
  category: 'people',
  tags: ['people', 'prospecting', 'apollo'],
  legacyIds: ['people_search'],
  input: Type.Object(
    {
      filters: PeopleFilters,
      max_results: Type.Integer({ minimum: 1, maximum: MAX_RESULTS, description: 'Rows to create, 1 to 1000.' }),
    },
    { additionalProperties: false },
  ),
  provider: APOLLO_PROVIDER,
  cost: { credits: 1, per: 'row' },
  maxRows: MAX_RESULTS,
  columns: () => COLUMNS,
  projectName: (form) => `People: ${(form.filters.person_titles ?? []).join(', ') || form.filters.q_keywords || 'search'}`.slice(0, 200),
  target: (form) => form.max_results,
  async *run(form, ctx) {
    const filters = activeFilters(form.filters);
    if (ctx.providerMode === 'sandbox') {
      const rand = seededRandom(`people:${JSON.stringify(filters)}`);
      const titles = form.filters.person_titles?.length ? form.filters.person_titles : ['Head of Sales'];
      for (const [start, end] of pages(form.max_results, 100)) {
        const page = [];
        for (let i = start; i < end; i++) {
          const first = pick(rand, SANDBOX_FIRST);
          const last = pick(rand, SANDBOX_LAST);
          const company = `${last} Labs ${i + 1}`;
          page.push({
            'First Name': first,
            'Last Name': last,
            'Full Name': `${first} ${last}`,
            Title: pick(rand, titles),
            Seniority: pick(rand, ['director', 'vp', 'head', 'manager'] as const),
            'LinkedIn URL': `https://linkedin.example.com/in/${slugify(`${first}-${last}-${i + 1}`)}`,
            Location: pick(rand, SANDBOX_CITIES),
            Company: company,
            'Company Domain': `${slugify(company)}.example.com`,
          });
        }
        yield page;
      }
      return;
    }
    for await (const people of apolloSearch<ApolloPerson>(ctx, '/api/v1/mixed_people/search', 'people', filters, form.max_results)) {
      yield people.map((p) => ({
        'First Name': p.first_name ?? null,
        'Last Name': p.last_name ?? null,
        'Full Name': p.name ?? null,
        Title: p.title ?? null,
        Seniority: p.seniority ?? null,
        'LinkedIn URL': p.linkedin_url ?? null,
        Location: [p.city, p.country].filter(Boolean).join(', ') || null,
        Company: p.organization?.name ?? null,
        'Company Domain': p.organization?.primary_domain ?? null,
      }));
    }
  },
});
