import { describe, expect, test } from 'bun:test';
import { parseQuantity } from '../core/icp/quantity.ts';
import { hasCriteria, scoreRow } from '../core/icp/score.ts';

describe('reading head-counts and revenues as typed in a sheet', () => {
  test.each([
    [250, 250],
    ['1,200', 1200],
    ['$12.5M', 12_500_000],
    ['2 billion', 2e9],
    ['10k+', 10_000],
    ['51-200', 125.5],
    ['1-5M', 3_000_000],
    ['$1M to $5M', 3_000_000],
    ['1,000-5,000', 3000],
    ['approx. 300 people', 300],
  ] as const)('%p reads as %p', (input, expected) => {
    expect(parseQuantity(input)).toBe(expected);
  });

  test('text without a number, empty cells and non-finite numbers are null', () => {
    for (const v of ['n/a', '', null, undefined, Number.NaN, {}]) expect(parseQuantity(v)).toBeNull();
  });
});

describe('scoring a row against an ICP', () => {
  const icp = { industries: ['Software', 'fintech'], employee_range: { min: 50, max: 500 }, locations: ['France'] };

  test('a row meeting every criterion scores 100, with one reason per criterion', () => {
    const r = scoreRow(icp, { Name: 'Acme', Industry: 'Enterprise software', Employees: '51-200', Country: 'France' });
    expect(r.score).toBe(100);
    expect(r.reasons.map((x) => [x.criterion, x.met])).toEqual([
      ['industries', true],
      ['employee_range', true],
      ['locations', true],
    ]);
    expect(r.reasons[0]?.reason).toBe('Industry "Enterprise software" matches "Software"');
  });

  test('the score is the weighted share of the criteria met (industries 25, employees 20, locations 15)', () => {
    expect(scoreRow(icp, { Industry: 'Software', Employees: 5000, Country: 'France' }).score).toBe(67); // 40 of 60
    expect(scoreRow(icp, { Industry: 'Retail', Employees: 100, Country: 'Spain' }).score).toBe(33); // 20 of 60
  });

  test('column names and terms match case-insensitively; terms match whole words', () => {
    expect(scoreRow({ industries: ['IT'] }, { industry: 'it services' }).score).toBe(100);
    expect(scoreRow({ industries: ['IT'] }, { INDUSTRY: 'Digital marketing' }).score).toBe(0);
    expect(scoreRow({ revenue_range: { min: 1e6 } }, { annual_revenue: '$2.5M' }).score).toBe(100);
  });

  test('a missing value counts as not met and says which columns were looked at', () => {
    const r = scoreRow({ titles: ['CTO'] }, { Name: 'Acme' });
    expect(r.score).toBe(0);
    expect(r.reasons[0]?.reason).toBe('no value in Title/Job Title/Position');
  });

  test('keywords look at the name, description and keywords; locations at any address column', () => {
    expect(scoreRow({ keywords: ['api'] }, { Name: 'Acme', Description: 'An API for payments' }).score).toBe(100);
    expect(scoreRow({ locations: ['Berlin'] }, { Address: 'Unter den Linden 1, Berlin' }).score).toBe(100);
    expect(scoreRow({ keywords: ['saas'] }, { Keywords: ['b2b', 'SaaS'] }).score).toBe(100);
  });

  test('criteria the ICP leaves out or leaves empty are not scored; no criteria at all is null', () => {
    expect(scoreRow({ industries: [], employee_range: {}, titles: ['CEO'] }, { Title: 'CEO' }).reasons).toHaveLength(1);
    expect(scoreRow({}, { Industry: 'x' })).toEqual({ score: null, reasons: [] });
    expect(hasCriteria({ employee_range: {} })).toBe(false);
    expect(hasCriteria({ employee_range: { max: 10 } })).toBe(true);
  });
});
