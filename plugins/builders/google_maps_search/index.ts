import { defineBuilder, pages, providerJson, requireEnv, Type } from 'workflow-service/plugin-sdk';
import { sandboxPlace } from './sandbox.ts';

const COLUMNS = ['Name', 'Address', 'Phone', 'Website', 'Rating', 'Reviews', 'Category', 'Google Maps URL'];
const MAX_RESULTS = 500;

interface Place {
  displayName?: { text?: string };
  formattedAddress?: string;
  internationalPhoneNumber?: string;
  websiteUri?: string;
  rating?: number;
  userRatingCount?: number;
  primaryTypeDisplayName?: { text?: string };
  googleMapsUri?: string;
}

export default defineBuilder({
  kind: 'builder',
  id: 'google_maps_search',
  version: '1.0.0',
  name: 'Google Maps search',
  summary: 'Finds businesses on Google Maps, such as “dentists in Lyon”: one row per place.',
  description:
    'Finds businesses with a Google Maps text search (for example "dentists in Lyon") and creates one row per place with name, address, phone, website, rating and category. Live mode needs GOOGLE_MAPS_API_KEY. Costs 1 credit per row.',
  category: 'companies',
  tags: ['local', 'companies', 'google'],
  legacyIds: ['google_map_builder'],
  input: Type.Object(
    {
      query: Type.String({ minLength: 1, description: 'What and where, as typed in Google Maps.' }),
      max_results: Type.Integer({ minimum: 1, maximum: MAX_RESULTS, description: 'Rows to create, 1 to 500.' }),
    },
    { additionalProperties: false },
  ),
  provider: {
    id: 'google_maps',
    requiredEnv: ['GOOGLE_MAPS_API_KEY'],
    optionalEnv: ['GOOGLE_MAPS_BASE_URL'],
    rateLimit: { perSecond: 10, burst: 10 },
  },
  cost: { credits: 1, per: 'row' },
  maxRows: MAX_RESULTS,
  columns: () => COLUMNS,
  projectName: (form) => `Google Maps: ${form.query}`.slice(0, 200),
  target: (form) => form.max_results,
  async *run(form, ctx) {
    if (ctx.providerMode === 'sandbox') {
      for (const [start, end] of pages(form.max_results, 20)) {
        yield Array.from({ length: end - start }, (_, k) => sandboxPlace(form.query, start + k));
      }
      return;
    }
    const key = requireEnv(ctx, 'GOOGLE_MAPS_API_KEY');
    const base = ctx.env('GOOGLE_MAPS_BASE_URL') ?? 'https://places.googleapis.com';
    // Resume after a crash from the page token saved with the last page written.
    const resume = ctx.resume?.cursor as { pageToken: string; produced: number } | undefined;
    let pageToken: string | undefined = resume?.pageToken;
    let produced = resume?.produced ?? 0;
    do {
      const body: Record<string, unknown> = { textQuery: form.query, pageSize: Math.min(20, form.max_results - produced) };
      if (pageToken) body.pageToken = pageToken;
      const data = (await providerJson(ctx, `${base}/v1/places:searchText`, {
        method: 'POST',
        headers: {
          'X-Goog-Api-Key': key,
          'X-Goog-FieldMask':
            'places.displayName,places.formattedAddress,places.internationalPhoneNumber,places.websiteUri,places.rating,places.userRatingCount,places.primaryTypeDisplayName,places.googleMapsUri,nextPageToken',
        },
        body,
      })) as { places?: Place[]; nextPageToken?: string };
      const places = (data.places ?? []).slice(0, form.max_results - produced);
      produced += places.length;
      pageToken = places.length ? data.nextPageToken : undefined;
      if (places.length) {
        const rows = places.map((p) => ({
          Name: p.displayName?.text ?? null,
          Address: p.formattedAddress ?? null,
          Phone: p.internationalPhoneNumber ?? null,
          Website: p.websiteUri ?? null,
          Rating: p.rating ?? null,
          Reviews: p.userRatingCount ?? null,
          Category: p.primaryTypeDisplayName?.text ?? null,
          'Google Maps URL': p.googleMapsUri ?? null,
        }));
        yield { rows, cursor: pageToken ? { pageToken, produced } : undefined };
      }
    } while (pageToken && produced < form.max_results);
  },
});
