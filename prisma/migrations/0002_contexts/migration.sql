-- AlterTable
ALTER TABLE "Context" ADD COLUMN     "lockedAt" TIMESTAMP(3),
ADD COLUMN     "lockedBy" TEXT,
ADD COLUMN     "savedAt" TIMESTAMP(3);

