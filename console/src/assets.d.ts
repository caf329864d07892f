/** Stylesheets imported for their effect: Bun's bundler emits them as the bundle's CSS file. */
declare module '*.css';
