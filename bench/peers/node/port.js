// Port from argv (node app.js PORT) or the PORT environment variable.
module.exports = Number(process.argv[2] || process.env.PORT || 8080);
