/** The parts of wappalyzer-core 6 (plain JavaScript, no types of its own) that tech_stack uses. */
declare module 'wappalyzer-core' {
  export interface Detection {
    technology?: { name: string };
  }
  export interface Resolved {
    name: string;
    slug: string;
    description: string | null;
    website: string | null;
    confidence: number;
    version: string;
    categories: { id: number; name: string; slug: string }[];
  }
  export interface AnalyzeInput {
    url?: string;
    html?: string;
    scripts?: string;
    scriptSrc?: string[];
    headers?: Record<string, string[]>;
    meta?: Record<string, string[]>;
    cookies?: Record<string, string[]>;
  }
  const wappalyzer: {
    setTechnologies(data: unknown): void;
    setCategories(data: unknown): void;
    analyze(items: AnalyzeInput): Detection[];
    resolve(detections: Detection[]): Resolved[];
  };
  export default wappalyzer;
}
